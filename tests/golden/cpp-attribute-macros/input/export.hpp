#pragma once
#if defined(_WIN32)
#  define MYLIB_API __declspec(dllexport)
#else
#  define MYLIB_API __attribute__((visibility("default")))
#endif
#define MYLIB_NOEXCEPT noexcept
#define MYLIB_OVERRIDE override
