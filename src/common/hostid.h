/* hostid.h: which host a process runs on, as the run directory needs it.
 *
 * Several hosts may write into one run directory (a shared filesystem, a
 * job over nodes; two containers or pid namespaces on one machine): their
 * pids are not unique there, so every private file of a process is named by
 * its host too (.ncrt-h<HOSTID>-<PID>.*, rundir.h), and a finalizer touches
 * only the files of its own host, where a pid means one process. A host is
 * the hostname, the boot id (a machine, once booted) and the inode of the
 * pid namespace (a container or an `unshare -p`): processes that share all
 * three see each other's pids. HOSTID is 12 hex digits of an FNV-1a hash
 * of the three. Header only (libncrt includes it without linking ncbase);
 * nc_host_read uses open/read/readlink/uname only, nothing that allocates. */
#ifndef NC_HOSTID_H
#define NC_HOSTID_H

#include <fcntl.h>
#include <stdint.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

#define NC_HOSTID_LEN 12

typedef struct {
  char name[65];          /* hostname (uname's nodename) */
  char boot_id[40];       /* /proc/sys/kernel/random/boot_id, "" unknown */
  unsigned long long pid_ns; /* inode of /proc/self/ns/pid, 0 unknown */
  char id[NC_HOSTID_LEN + 1]; /* hex hash of the three */
} NcHost;

static inline uint64_t nc_host_fnv(uint64_t h, const char *s, size_t n) {
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)s[i]) * 1099511628211ull;
  return h;
}

static inline void nc_host_read(NcHost *h) {
  memset(h, 0, sizeof *h);
  struct utsname u;
  if (uname(&u) == 0) {
    size_t n = strlen(u.nodename);
    if (n >= sizeof h->name) n = sizeof h->name - 1;
    memcpy(h->name, u.nodename, n);
  }
  int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
  if (fd >= 0) {
    ssize_t n = read(fd, h->boot_id, sizeof h->boot_id - 1);
    close(fd);
    if (n < 0) n = 0;
    h->boot_id[n] = 0;
    for (ssize_t i = 0; i < n; i++)
      if (!((h->boot_id[i] >= '0' && h->boot_id[i] <= '9') || (h->boot_id[i] >= 'a' && h->boot_id[i] <= 'f') ||
            h->boot_id[i] == '-'))
        h->boot_id[i] = 0;
  }
  char l[64];
  ssize_t n = readlink("/proc/self/ns/pid", l, sizeof l - 1); /* "pid:[4026531836]" */
  if (n > 0) {
    l[n] = 0;
    for (const char *p = l; *p; p++)
      if (*p >= '0' && *p <= '9') h->pid_ns = h->pid_ns * 10 + (unsigned long long)(*p - '0');
  }
  uint64_t x = 14695981039346656037ull;
  x = nc_host_fnv(x, h->name, strlen(h->name) + 1);
  x = nc_host_fnv(x, h->boot_id, strlen(h->boot_id) + 1);
  x = nc_host_fnv(x, (const char *)&h->pid_ns, sizeof h->pid_ns);
  static const char hex[] = "0123456789abcdef";
  for (int i = 0; i < NC_HOSTID_LEN; i++) h->id[i] = hex[(x >> (4 * i)) & 15];
  h->id[NC_HOSTID_LEN] = 0;
}

#endif
