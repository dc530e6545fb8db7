/* autoconf style: <config.h> first, in angle brackets */
#ifdef HAVE_CONFIG_H
# include <config.h>
#endif
#include <sys/types.h>
#include <unistd.h>

off_t seek_end(int fd) { return lseek(fd, 0, SEEK_END); }
