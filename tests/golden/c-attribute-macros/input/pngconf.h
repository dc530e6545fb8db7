/* libpng's calling conventions and declarator macros (cut down). */
#ifndef PNGCONF_H
#define PNGCONF_H
#if defined(_MSC_VER)
#  define PNGCAPI __cdecl
#else
#  define PNGCAPI
#endif
#ifndef PNGAPI
#  define PNGAPI PNGCAPI
#endif
#define PNGCBAPI PNGCAPI
#ifdef __GNUC__
#  define PNG_NORETURN __attribute__((__noreturn__))
#  define PNG_RESTRICT __restrict
#else
#  define PNG_NORETURN /* This function does not return */
#  define PNG_RESTRICT
#endif
/* a whole function header from its parts: read as `type name args` */
#define PNG_FUNCTION(type, name, args, attributes) attributes type name args
/* a statement macro: its ';' is its own */
#define PNG_UNUSED(param) (void)param;
typedef unsigned int png_uint_32;
typedef struct png_struct_def { int flags; } *png_structp;
#endif
