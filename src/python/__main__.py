"""`python -m nbcuda ARGS...` runs the `nbcuda` command (the CLI: compile, detect, info, ...)
that the wheel installs beside this interpreter's scripts, with the same arguments, streams
and exit status. Only that installation's command is run, never another one found on PATH,
so the command and the module are the same build."""
import os
import sys
import sysconfig


def _command():
    """The path of the installed `nbcuda` command, and the folders looked in."""
    folders = []
    schemes = [None] + [s for s in (f"{os.name}_user",) if s in sysconfig.get_scheme_names()]
    for scheme in schemes:
        try:
            folder = sysconfig.get_path("scripts", scheme) if scheme else \
                sysconfig.get_path("scripts")
        except KeyError:
            continue
        if folder and folder not in folders:
            folders.append(folder)
    for folder in folders:
        path = os.path.join(folder, "nbcuda")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path, folders
    return None, folders


def main():
    path, folders = _command()
    if path is None:
        sys.stderr.write("python -m nbcuda: the nbcuda command is not installed beside this "
                         f"Python (looked in {', '.join(folders) or 'no scripts folder'}); "
                         "install nbcuda with pip, which puts it there\n")
        return 127
    os.execv(path, ["nbcuda"] + sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
