/* config.h, as autoconf's AC_SYS_LARGEFILE writes it */
#define _FILE_OFFSET_BITS 64
#define HAVE_UNISTD_H 1
