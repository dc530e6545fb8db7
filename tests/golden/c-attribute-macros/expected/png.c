#include <ncrt.h>
#line 1 "input/png.c"
#include <stdio.h>
#include <stdlib.h>
#include "pngconf.h"

png_uint_32 PNGAPI
png_access_version_number(void)
{ NCRT_RANGE("png_access_version_number");
   return 10639;
}

PNG_FUNCTION(void,PNGAPI
png_error,(png_structp png_ptr, const char *PNG_RESTRICT message),PNG_NORETURN)
{ NCRT_RANGE("png_error");
   PNG_UNUSED(png_ptr)
   fprintf(stderr, "libpng error: %s\n", message);
   exit(1);
}

PNG_FUNCTION(void /* PRIVATE */, (PNGCBAPI
png_default_error),(png_structp png_ptr, const char *message),PNG_NORETURN)
{ NCRT_RANGE("png_default_error");
   png_error(png_ptr, message);
}

void PNGAPI
png_set_flag(png_structp png_ptr, int flag, int unused)
{ NCRT_RANGE("png_set_flag");
   { NCRT_RANGE("set_flag.body"); PNG_UNUSED(unused)
   png_ptr->flags |= flag; }
}
