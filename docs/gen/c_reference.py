"""The C API reference page, generated from include/nbcuda.h.

The header is the documentation of the C API: each declaration is preceded by a comment
saying what it does, and banner comments (a line of dashes, a title, a line of dashes) divide
it into sections. This script reads the header as written and turns it into Markdown: one
section per banner, one entry per declaration (its text as C, then the comment before it).
A comment followed by several declarations without a blank line between them documents all
of them (`nbc_default_stream`, `nbc_legacy_default_stream`, ...).

Run alone, it prints the page: `python3 docs/gen/c_reference.py [include/nbcuda.h]`.
The docs build (docs/gen/hooks.py) calls page(); tests/docs/check_c_reference.py checks that
every nbc_ function the header declares has an entry.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADER = os.path.join(ROOT, "include", "nbcuda.h")

BANNER = re.compile(r"^/\*\s*-{10,}")
FUNCTION = re.compile(r"\b(nbc_\w+)\s*\(")


def _comment_text(raw):
    """The prose of a /* ... */ comment: delimiters and leading asterisks removed."""
    body = raw[2:-2]
    lines = []
    for line in body.split("\n"):
        line = line.strip()
        if line.startswith("*"):
            line = line[1:]
            if line.startswith(" "):
                line = line[1:]
        lines.append(line.rstrip())
    return "\n".join(lines).strip()


def _banner(raw):
    """(title, entries, intro) of a banner comment: its first sentence is the title, the rest
    an introduction to the section."""
    text = _comment_text(raw)
    text = " ".join(l.strip() for l in text.split("\n") if not re.fullmatch(r"-+", l.strip()))
    m = re.match(r"(.+?[.:])(\s+|$)(.*)", text)
    title, intro = (m.group(1), m.group(3)) if m else (text, "")
    return (title.rstrip(".:"), [], intro.strip())


def parse(path=HEADER):
    """[(section title, [entry])]; an entry is a dict: kind ('function', 'type', 'macro'),
    names (the nbc_/NBC_ names it declares), code (its C text), doc (its comment)."""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    sections = [("Version", [], "")]
    i, n = 0, len(src)
    pending = None  # the last comment, waiting for its declarations
    blank_since_decl = True
    # Skip the file's opening comment (the header's own description, shown separately).
    m = re.match(r"\s*/\*.*?\*/", src, re.S)
    if m:
        i = m.end()
    while i < n:
        c = src[i]
        if c == "\n":
            # a blank line ends a comment's group of declarations
            j = i + 1
            while j < n and src[j] in " \t":
                j += 1
            if j < n and src[j] == "\n":
                pending = None if not blank_since_decl else pending
                blank_since_decl = True
            i += 1
            continue
        if c in " \t":
            i += 1
            continue
        if src.startswith("/*", i):
            end = src.index("*/", i) + 2
            raw = src[i:end]
            if BANNER.match(raw):
                sections.append(_banner(raw))
                pending = None
            else:
                pending = _comment_text(raw)
            blank_since_decl = False
            i = end
            continue
        if src.startswith("//", i):
            i = src.index("\n", i)
            continue
        if c == "#":
            end = i
            while True:
                nl = src.find("\n", end)
                if nl < 0:
                    nl = n
                if src[nl - 1] == "\\":
                    end = nl + 1
                    continue
                break
            line = src[i:nl]
            m = re.match(r"#\s*define\s+(NBC_\w+)", line)
            if m and not m.group(1).endswith("_H") and not m.group(1).endswith("_"):
                _add(sections, pending, "macro", [m.group(1)], line)
            i = nl
            continue
        if src.startswith("extern", i) and src[i:i + 12].startswith('extern "C"'):
            i = src.index("{", i) + 1
            continue
        if c == "}":  # the extern "C" block's end
            i += 1
            continue
        # a declaration: up to the ';' at brace depth 0
        depth, j = 0, i
        while j < n:
            if src.startswith("/*", j):
                j = src.index("*/", j) + 2
                continue
            ch = src[j]
            if ch == "{":
                depth += 1
            elif ch == "}":
                depth -= 1
            elif ch == ";" and depth == 0:
                break
            j += 1
        code = src[i:j + 1].strip()
        i = j + 1
        # a comment on the declaration's last line belongs to it
        rest = src[i:src.find("\n", i) if src.find("\n", i) >= 0 else n]
        m = re.match(r"[ \t]*(/\*.*?\*/)", rest)
        if m:
            code += " " + m.group(1)
            i += m.end()
        if code.startswith("typedef") or code.startswith("struct") or code.startswith("enum"):
            names = re.findall(r"\b(nbc_\w+_t)\b", code)
            last = names[-1:] if code.startswith("typedef") else names[:1]
            fn = re.search(r"\(\s*\*\s*(nbc_\w+)\s*\)", code)
            _add(sections, pending, "type", [fn.group(1)] if fn else (last or names), code)
        else:
            names = FUNCTION.findall(_without_comments(code))
            if names:
                _add(sections, pending, "function", names[:1], code)
        blank_since_decl = False
    return [s for s in sections if s[1]]


def _without_comments(code):
    return re.sub(r"/\*.*?\*/", "", code, flags=re.S)


def _add(sections, doc, kind, names, code):
    sections[-1][1].append({"kind": kind, "names": names, "code": code, "doc": doc or ""})


def header_description(path=HEADER):
    with open(path, encoding="utf-8") as f:
        m = re.match(r"\s*/\*(.*?)\*/", f.read(), re.S)
    return _comment_text("/*" + m.group(1) + "*/") if m else ""


def _anchor(name):
    return name.lower()


def page(path=HEADER):
    sections = parse(path)
    out = ["# C API reference", "",
           "Generated from `include/nbcuda.h` when the documentation is built: each entry is the "
           "header's declaration and the comment above it. The header says:", ""]
    out += ["> " + line if line else ">" for line in header_description(path).split("\n")]
    out += ["", "Sections: " + ", ".join(f"[{t}](#{_slug(t)})" for t, _, _ in sections) + ".", ""]
    for title, entries, intro in sections:
        out += [f"## {title} {{#{_slug(title)}}}", ""]
        if intro:
            out += [_escape(intro), ""]
        for k, e in enumerate(entries):
            if e["kind"] in ("function", "type") and e["names"]:
                out += [f"### `{e['names'][0]}` {{#{_anchor(e['names'][0])}}}", ""]
            out += ["```c", e["code"], "```", ""]
            # a comment that documents several declarations is shown once, after the last
            nxt = entries[k + 1] if k + 1 < len(entries) else None
            if e["doc"] and not (nxt and nxt["doc"] is e["doc"]):
                out += [_escape(e["doc"]), ""]
    return "\n".join(out) + "\n"


def _slug(title):
    s = re.sub(r"[^\w\s-]", "", title.lower()).strip()
    return "c-" + re.sub(r"[\s_]+", "-", s)[:40].strip("-")


def _escape(text):
    """Comment prose as Markdown: kept line by line, with characters Markdown would read as
    markup (<, *, _, |) escaped outside `code`."""
    out = []
    for part in re.split(r"(`[^`]*`)", text):
        if part.startswith("`"):
            out.append(part)
        else:
            part = part.replace("\\", "\\\\").replace("<", "&lt;").replace("*", "\\*")
            part = part.replace("_", "\\_").replace("|", "\\|")
            out.append(part)
    return "".join(out).replace("\n", "  \n")


def documented_functions(markdown):
    """The nbc_ functions a generated page has an entry for."""
    return set(re.findall(r"^### `(nbc_\w+)` \{#", markdown, re.M))


if __name__ == "__main__":
    sys.stdout.write(page(sys.argv[1] if len(sys.argv) > 1 else HEADER))
