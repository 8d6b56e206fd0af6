// What libtmemjit.so exports: the library compiles with hidden visibility, and every public header
// wraps its declarations in TMEMJIT_API_BEGIN / TMEMJIT_API_END, so the dynamic symbol table holds
// the public API and nothing else (no tmem::ptx, tmem::sim or third-party symbols).
#pragma once

#if defined(__GNUC__) || defined(__clang__)
// One declaration (e.g. a function added to a header outside the begin/end pair).
#define TMEMJIT_API __attribute__((visibility("default")))
// Everything declared between the two: classes with their members, functions, type info.
#define TMEMJIT_API_BEGIN _Pragma("GCC visibility push(default)")
#define TMEMJIT_API_END _Pragma("GCC visibility pop")
#else
#define TMEMJIT_API
#define TMEMJIT_API_BEGIN
#define TMEMJIT_API_END
#endif
