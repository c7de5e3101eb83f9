# cli_compile.cmake — tests of `nbcuda compile` (tools/cmd_compile.c): exit codes, outputs,
# -o, --dump and --verbose. Each test is a small shell command so that exit statuses 1 and
# 2 can be told apart (ctest's WILL_FAIL cannot) and files written with -o can be checked.
if(TARGET nbcuda_cli)
  set(_nbc "$<TARGET_FILE:nbcuda_cli>")
  set(_corpus "${PROJECT_SOURCE_DIR}/tests/corpus")
  set(_work "${CMAKE_CURRENT_BINARY_DIR}/cli_compile")
  file(MAKE_DIRECTORY ${_work})
  file(WRITE ${_work}/bad.py "def f(a):\n    return a +\n")
  file(WRITE ${_work}/typing.py "def f(a):\n    return a.nothing\n")

  function(nbc_cli_test name command)
    add_test(NAME ${name} COMMAND sh -c "${command}")
    set_tests_properties(${name} PROPERTIES TIMEOUT 120 ${ARGN})
  endfunction()

  # A device function (C ABI) and a kernel to stdout; the PTX must pass ptxas.
  nbc_cli_test(cli_compile_device
    "${_nbc} compile ${_corpus}/scalars.py:hypot3 --sig 'float32(float32, float32, float32)' --cc 9.0 > ${_work}/h.ptx && grep -q '.visible .func' ${_work}/h.ptx && /usr/local/cuda/bin/ptxas -arch=sm_90 -c ${_work}/h.ptx -o /dev/null")
  nbc_cli_test(cli_compile_kernel
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --cc 9.0 -o ${_work}/s.ptx && grep -q '.visible .entry' ${_work}/s.ptx && ! grep -q func_retval ${_work}/s.ptx && /usr/local/cuda/bin/ptxas -arch=sm_90 ${_work}/s.ptx -o /dev/null")
  # --output cubin: linked by nvJitLink with what the code needs (here numba.cuda.fp16's
  # wrappers, compiled by NVRTC, for math.sqrt of a float16), an ELF ready to load.
  file(WRITE ${_work}/half_sqrt.py "import math\ndef f(a):\n    return math.sqrt(a)\n")
  if(EXISTS /usr/local/cuda/lib64/libnvJitLink.so.13 AND EXISTS /usr/local/cuda/lib64/libnvrtc.so.13)
    nbc_cli_test(cli_compile_cubin
      "${_nbc} compile ${_work}/half_sqrt.py:f --sig 'float16(float16)' --cc 9.0 --output cubin -o ${_work}/h.cubin && head -c 4 ${_work}/h.cubin | grep -q ELF")
  endif()
  # The numba module's types and numba.cuda, read from the file's imports.
  file(WRITE ${_work}/numba_module.py "import numba\nimport numba as nb\nfrom numba import cuda\ndef k(out, a):\n    sm = cuda.shared.array(4, dtype=numba.float32)\n    sm[0] = a[0]\n    out[numba.cuda.grid(1)] = sm[0] + nb.types.int32(a[1])\n")
  nbc_cli_test(cli_compile_numba_module
    "${_nbc} compile ${_work}/numba_module.py:k --sig 'void(float64[:], float64[:])' --kernel --cc 9.0 -o ${_work}/nm.ptx && /usr/local/cuda/bin/ptxas -arch=sm_90 ${_work}/nm.ptx -o /dev/null")
  # FILE.py:f needs only what f reaches to be in the kernel language: the other statements of
  # tests/data/mixed_syntax.py use match, PEP 695 aliases and generics, 3.12 f-strings...; a
  # function reaching a name that a statement which does not parse defines gets that
  # statement's syntax error (exit 1), naming its line; what parses but is not in the kernel
  # language (match) is the usual unsupported-statement error.
  set(_mixed "${PROJECT_SOURCE_DIR}/tests/data/mixed_syntax.py")
  nbc_cli_test(cli_compile_skips_statements_that_do_not_parse
    "${_nbc} compile ${_mixed}:scale --sig 'void(float64[:])' --kernel --cc 9.0 -o ${_work}/mixed.ptx && /usr/local/cuda/bin/ptxas -arch=sm_90 ${_work}/mixed.ptx -o /dev/null")
  nbc_cli_test(cli_compile_reaching_an_unparsed_alias
    "${_nbc} compile ${_mixed}:uses_alias --sig 'void(float64[:])' > /dev/null 2> ${_work}/alias.err; test $? -eq 1 && grep -q 'mixed_syntax.py:9:6: error: ' ${_work}/alias.err && grep -q \"During: resolving 'Vector', which this statement defines\" ${_work}/alias.err")
  nbc_cli_test(cli_compile_reaching_an_unparsed_function
    "${_nbc} compile ${_mixed}:uses_generic --sig 'void(float64[:])' > /dev/null 2> ${_work}/generic.err; test $? -eq 1 && grep -q \"mixed_syntax.py:29:12: error: expected '(' after the function name, found '\\['\" ${_work}/generic.err")
  nbc_cli_test(cli_compile_unparsed_function_asked_for
    "${_nbc} compile ${_mixed}:fmt --sig 'void(float64[:])' > /dev/null 2> ${_work}/fmt.err; test $? -eq 1 && grep -q 'mixed_syntax.py:26:18: error: ' ${_work}/fmt.err && ! grep -q During ${_work}/fmt.err")
  nbc_cli_test(cli_compile_reaching_match
    "${_nbc} compile ${_mixed}:uses_describe --sig 'void(float64[:])' > /dev/null 2> ${_work}/match.err; test $? -eq 1 && grep -q \"mixed_syntax.py:16:5: error: unsupported statement: 'match'\" ${_work}/match.err")
  # -o - is stdout: the PTX comes out there and no file named "-" is left behind.
  file(MAKE_DIRECTORY ${_work}/dash)
  nbc_cli_test(cli_compile_output_dash_is_stdout
    "cd ${_work}/dash && rm -f ./- && ${_nbc} compile ${_corpus}/scalars.py:add --sig 'float32(float32, float32)' -o - | grep -q '.visible .func' && test ! -e ./-")
  # Options visible in the PTX.
  nbc_cli_test(cli_compile_fastmath
    "${_nbc} compile ${_corpus}/scalars.py:hypot3 --sig 'float32(float32, float32, float32)' --fastmath | grep -q 'sqrt.approx.ftz.f32'")
  nbc_cli_test(cli_compile_lineinfo
    "${_nbc} compile ${_corpus}/scalars.py:hypot3 --sig 'float32(float32, float32, float32)' --lineinfo | grep -q 'scalars.py'")
  nbc_cli_test(cli_compile_abi_name
    "${_nbc} compile ${_corpus}/scalars.py:add --sig 'float32(float32, float32)' --abi-name my_add | grep -q ') my_add('")
  # The symbol is written into the IR as it is: anything but a C ABI name is refused (exit 1).
  nbc_cli_test(cli_compile_abi_name_refused
    "${_nbc} compile ${_corpus}/scalars.py:add --sig 'float32(float32, float32)' --abi-name 'f\"() { ret float 0.0 } define void @evil' > ${_work}/evil.ptx 2> ${_work}/evil.err; test $? -eq 1 && ! grep -q evil ${_work}/evil.ptx && grep -q \"invalid abi_name 'f.() { ret float 0.0 } define void @evil': a C ABI name is a letter or '_' followed by letters, digits, '_' or '.'\" ${_work}/evil.err")
  nbc_cli_test(cli_compile_numba_abi
    "${_nbc} compile ${_corpus}/scalars.py:add --sig 'float32(float32, float32)' --abi numba | grep -q NumbaEnv")
  nbc_cli_test(cli_compile_launch_bounds
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --cc 9.0 --launch-bounds 128,2 | grep -q '.minnctapersm 2'")
  nbc_cli_test(cli_compile_arch_specific_cc
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --cc 9.0a | grep -q '.target sm_90a'")
  nbc_cli_test(cli_compile_forceinline
    "${_nbc} compile ${_corpus}/scalars.py:add --sig 'float32(float32, float32)' --forceinline --output ltoir --dump=ir | grep -q ') alwaysinline {'")
  # A helper of the file decorated jit(device=True, forceinline=True) is inlined into the
  # kernel even at -opt=0 (where libNVVM inlines nothing by itself); without it the call stays.
  file(WRITE ${_work}/inline_helper.py
    "from numba import cuda\n\n@cuda.jit(device=True, forceinline=True)\ndef helper(x):\n    return x * 2\n\n@cuda.jit\ndef k(r, x):\n    r[0] = helper(x[0])\n")
  file(WRITE ${_work}/plain_helper.py
    "from numba import cuda\n\n@cuda.jit(device=True)\ndef helper(x):\n    return x * 2\n\n@cuda.jit\ndef k(r, x):\n    r[0] = helper(x[0])\n")
  nbc_cli_test(cli_compile_forceinline_decorator
    "${_nbc} compile ${_work}/inline_helper.py:k --sig 'void(float32[:], float32[:])' --kernel --no-opt --cc 9.0 > ${_work}/inline_helper.ptx && grep -q '.visible .entry' ${_work}/inline_helper.ptx && ! grep -q 'call.uni' ${_work}/inline_helper.ptx")
  nbc_cli_test(cli_compile_plain_helper_is_called
    "${_nbc} compile ${_work}/plain_helper.py:k --sig 'void(float32[:], float32[:])' --kernel --no-opt --cc 9.0 | grep -q 'call.uni'")
  nbc_cli_test(cli_compile_usage_bad_launch_bounds
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --launch-bounds 0; test $? -eq 2")
  # LTO-IR to a file: starts with the magic ED 43 4E 7F.
  nbc_cli_test(cli_compile_ltoir
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --output ltoir -o ${_work}/s.ltoir && test \"$(od -An -tx1 -N4 ${_work}/s.ltoir | tr -d ' ')\" = ed434e7f")
  # Dumps.
  nbc_cli_test(cli_compile_dump_tokens
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --dump=tokens | grep -q NAME")
  nbc_cli_test(cli_compile_dump_ast
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --dump=ast | grep -q '(return (+ a b))'")
  nbc_cli_test(cli_compile_dump_types
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int32, int32)' --dump=types | grep -q 'int64'")
  nbc_cli_test(cli_compile_dump_ir
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --dump=ir | grep -q '!nvvmir.version'")
  nbc_cli_test(cli_compile_verbose
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(float32, float32)' --verbose 2>&1 >/dev/null | grep -q 'return type: float32'")
  # Host code in the same file (with, try, defaults, classes...) does not stop a kernel from
  # compiling; compiling the host function reports it.
  set(_app "${PROJECT_SOURCE_DIR}/tests/data/host_app.py")
  nbc_cli_test(cli_compile_host_code_file
    "${_nbc} compile ${_app}:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --cc 9.0 | grep -q '.visible .entry'")
  nbc_cli_test(cli_compile_host_function
    "${_nbc} compile ${_app}:main --sig '()' 2> ${_work}/host.err; test $? -eq 1 && grep -q \"host_app.py:60:5: error: unsupported statement: 'global'\" ${_work}/host.err")
  # Exit statuses: 1 for a compile error (diagnostic on stderr), 2 for bad usage.
  nbc_cli_test(cli_compile_syntax_error
    "${_nbc} compile ${_work}/bad.py:f --sig '(int64,)' 2> ${_work}/bad.err; test $? -eq 1 && grep -q 'bad.py:2:' ${_work}/bad.err")
  nbc_cli_test(cli_compile_typing_error
    "${_nbc} compile ${_work}/typing.py:f --sig '(int64,)' 2> ${_work}/typing.err; test $? -eq 1 && grep -q 'typing.py:2:' ${_work}/typing.err")
  nbc_cli_test(cli_compile_no_function
    "${_nbc} compile ${_corpus}/scalars.py:nope --sig '(int64,)'; test $? -eq 1")
  nbc_cli_test(cli_compile_missing_file
    "${_nbc} compile ${_work}/missing.py:f --sig '(int64,)'; test $? -eq 1")
  nbc_cli_test(cli_compile_usage_no_sig
    "${_nbc} compile ${_corpus}/scalars.py:add; test $? -eq 2")
  nbc_cli_test(cli_compile_usage_bad_option
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --frobnicate; test $? -eq 2")
  nbc_cli_test(cli_compile_usage_bad_cc
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --cc nine; test $? -eq 2")
  nbc_cli_test(cli_compile_usage_kernel_c_abi
    "${_nbc} compile ${_corpus}/arrays.py:saxpy --sig 'void(float32[:], float32, float32[:], float32[:])' --kernel --abi c; test $? -eq 2")
  # Input that is no source: a directory says so; an endless file stops at the size cap
  # (16 MiB by default, --max-source-size, NBCUDA_MAX_SOURCE_SIZE) within 1 GB of memory
  # (before the cap it read 7.8 GB).
  nbc_cli_test(cli_compile_directory_input
    "${_nbc} compile ${_work}:f --sig '(int64,)' 2> ${_work}/dir.err; test $? -eq 1 && grep -qx 'nbcuda compile: cannot read ${_work}: it is a directory, not a Python file' ${_work}/dir.err")
  # (ASan reserves terabytes of address space for its shadow: no ulimit -v there.)
  set(_limit_as "ulimit -v 1000000;")
  if(NBCUDA_SANITIZE)
    set(_limit_as "")
  endif()
  nbc_cli_test(cli_compile_endless_input
    "${_limit_as} ${_nbc} compile /dev/zero:f --sig '(int64,)' 2> ${_work}/zero.err; test $? -eq 1 && grep -qx 'nbcuda compile: /dev/zero is more than 16777216 bytes, the limit on a source (raise it with --max-source-size or NBCUDA_MAX_SOURCE_SIZE)' ${_work}/zero.err")
  nbc_cli_test(cli_compile_max_source_size
    "${_nbc} compile ${_work}/bad.py:f --sig '(int64,)' --max-source-size 10 2> ${_work}/cap.err; test $? -eq 1 && grep -q 'bad.py is more than 10 bytes' ${_work}/cap.err && NBCUDA_MAX_SOURCE_SIZE=10 ${_nbc} compile ${_work}/typing.py:f --sig '(int64,)' 2>&1 | grep -q 'typing.py is more than 10 bytes'")
  nbc_cli_test(cli_compile_help "${_nbc} compile --help | grep -q 'usage: nbcuda compile'")
  # FILE - is standard input; -:FUNC names the function, anywhere among the options;
  # diagnostics call it <stdin>.
  nbc_cli_test(cli_compile_stdin
    "${_nbc} compile --sig 'float32(float32, float32)' -:add --cc 9.0 < ${_corpus}/scalars.py | grep -q '.visible .func'")
  nbc_cli_test(cli_compile_stdin_single_function
    "printf 'def f(a):\\n    return a + 1\\n' | ${_nbc} compile - --sig 'int64(int64)' | grep -q '.visible .func'")
  nbc_cli_test(cli_compile_stdin_diagnostic
    "${_nbc} compile -:f --sig '(int64,)' < ${_work}/bad.py 2> ${_work}/stdin.err; test $? -eq 1 && grep -q '^<stdin>:2:' ${_work}/stdin.err")
  # getopt_long: options before FILE, --name=value, -- before an operand.
  nbc_cli_test(cli_compile_options_first
    "${_nbc} compile --sig='float32(float32, float32)' --cc=9.0 -- ${_corpus}/scalars.py:add | grep -q '.target sm_90'")
  # A usage error is one line naming the mistake and the help, never the whole help.
  nbc_cli_test(cli_compile_usage_one_line
    "${_nbc} compile ${_corpus}/scalars.py:add --sig '(int64, int64)' --frobnicate 2> ${_work}/usage.err; test $? -eq 2 && test $(wc -l < ${_work}/usage.err) -eq 1 && grep -qx \"nbcuda compile: unknown option '--frobnicate' (try nbcuda compile --help)\" ${_work}/usage.err")
endif()
