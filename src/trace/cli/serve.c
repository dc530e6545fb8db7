/* serve: the report page and its windows over HTTP on 127.0.0.1 (serve.h). */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

enum { MAX_REQUEST = 16384, CAP_DEFAULT = 4000, CAP_MAX = 100000 };

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static void bad(Buf *body, const char *why) {
  buf_puts(body, "{\"error\":\"");
  buf_puts(body, why); /* our own texts: no quotes or backslashes */
  buf_puts(body, "\"}");
}

/* One "key=integer" value of the query; false if malformed. */
static bool int_value(const char *v, size_t n, int64_t *out) {
  if (!n || n > 20) return false;
  char tmp[24];
  memcpy(tmp, v, n);
  tmp[n] = 0;
  char *end;
  errno = 0;
  long long x = strtoll(tmp, &end, 10);
  if (errno || *end || end == tmp) return false;
  *out = x;
  return true;
}

/* a - b and a + b, saturated (a window's ends come from the URL) */
static int64_t sat_sub(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_sub_overflow(a, b, &r) ? (b > 0 ? INT64_MIN : INT64_MAX) : r;
}
static int64_t sat_add(int64_t a, int64_t b) {
  int64_t r;
  return __builtin_add_overflow(a, b, &r) ? (b > 0 ? INT64_MAX : INT64_MIN) : r;
}

static int events_answer(const ServeSite *s, const char *q, Buf *body) {
  int64_t a = 0, b = 0, cap = CAP_DEFAULT, l0 = 0, l1 = (int64_t)s->nlanes;
  bool has_a = false, has_b = false;
  while (q && *q) {
    const char *amp = strchr(q, '&'), *end = amp ? amp : q + strlen(q), *eq = memchr(q, '=', (size_t)(end - q));
    if (!eq) return bad(body, "a query item without '='"), 400;
    size_t kl = (size_t)(eq - q);
    int64_t v;
    if (!int_value(eq + 1, (size_t)(end - eq - 1), &v)) return bad(body, "a value that is not an integer"), 400;
    if (kl == 1 && *q == 'a') a = v, has_a = true;
    else if (kl == 1 && *q == 'b') b = v, has_b = true;
    else if (kl == 3 && !memcmp(q, "cap", 3)) cap = v;
    else if (kl == 2 && !memcmp(q, "l0", 2)) l0 = v;
    else if (kl == 2 && !memcmp(q, "l1", 2)) l1 = v;
    else return bad(body, "an unknown query key (a, b, cap, l0, l1)"), 400;
    q = amp ? amp + 1 : end;
  }
  if (!has_a || !has_b) return bad(body, "a and b (the window, ns) are required"), 400;
  if (a > b) return bad(body, "a window that ends before it starts"), 400;
  if (cap < 1 || cap > CAP_MAX) return bad(body, "cap out of 1..100000"), 400;
  if (l0 < 0 || l1 > (int64_t)s->nlanes || l0 > l1) return bad(body, "a lane range out of the page's lanes"), 400;
  uint32_t *out = xmalloc((size_t)cap * sizeof *out);
  buf_printf(body, "{\"a\":%lld,\"b\":%lld,\"l0\":%lld,\"lanes\":[", (long long)a, (long long)b, (long long)l0);
  for (int64_t l = l0; l < l1; l++) {
    const WinLane *w = &s->lanes[l];
    int64_t sh = s->shift[l];
    size_t n = win_query(w, sat_sub(a, sh), sat_sub(b, sh), out, (size_t)cap);
    if (l > l0) buf_putc(body, ',');
    if (n > (size_t)cap) {
      buf_puts(body, "null");
      continue;
    }
    buf_putc(body, '[');
    for (size_t k = 0; k < n; k++) {
      const Ev *e = &w->t->ev.v[out[k]];
      buf_printf(body, "%s%lld,%lld,%lld,%u,%lld,%lld", k ? "," : "", (long long)sat_add(e->ts, sh), (long long)e->dur,
                 (long long)s->page_name[e->name], e->ord, (long long)e->corr, (long long)e->bytes);
    }
    buf_putc(body, ']');
  }
  buf_puts(body, "]}");
  free(out);
  return 200;
}

int serve_answer(const ServeSite *s, const char *target, Buf *body, const char **ctype) {
  *ctype = "application/json";
  const char *q = strchr(target, '?');
  size_t pl = q ? (size_t)(q - target) : strlen(target);
  if ((pl == 1 && target[0] == '/') || (pl == 11 && !memcmp(target, "/index.html", 11))) {
    *ctype = "text/html; charset=utf-8";
    buf_add(body, s->page, s->page_len);
    return 200;
  }
  if (pl == 7 && !memcmp(target, "/events", 7)) return events_answer(s, q ? q + 1 : NULL, body);
  if (pl == 12 && !memcmp(target, "/favicon.ico", 12)) return 204; /* none: the browser asks for it */
  bad(body, "no such path (/ and /events)");
  return 404;
}

static const char *status_text(int st) {
  switch (st) {
  case 200: return "OK";
  case 204: return "No Content";
  case 400: return "Bad Request";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  default: return "Request Header Fields Too Large";
  }
}

static void send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR && !g_stop) continue;
    if (w <= 0) return; /* the client went away: its loss */
    p += w, n -= (size_t)w;
  }
}

/* Read one request's head, answer it, close. */
static void serve_one(const ServeSite *s, int fd) {
  char req[MAX_REQUEST + 1];
  size_t got = 0;
  while (got < MAX_REQUEST) {
    ssize_t r = recv(fd, req + got, MAX_REQUEST - got, 0);
    if (r < 0 && errno == EINTR && !g_stop) continue;
    if (r <= 0) break;
    got += (size_t)r;
    req[got] = 0;
    if (strstr(req, "\r\n\r\n") || strstr(req, "\n\n")) break;
  }
  req[got] = 0;
  if (!got) return;
  Buf body = {0};
  const char *ctype = "application/json";
  int st;
  char *sp1 = strchr(req, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL, *eol = strchr(req, '\n');
  if (memchr(req, 0, got)) st = 400, bad(&body, "a NUL byte in the request");
  else if (!sp1 || !sp2 || (eol && sp2 > eol)) st = 400, bad(&body, "not an HTTP request line");
  else if (sp1 - req != 3 || memcmp(req, "GET", 3)) st = 405, bad(&body, "only GET");
  else if (!strstr(req, "\r\n\r\n") && !strstr(req, "\n\n")) st = 431, bad(&body, "the request's head is too long");
  else {
    *sp2 = 0;
    st = serve_answer(s, sp1 + 1, &body, &ctype);
  }
  char head[256];
  int hl = snprintf(head, sizeof head,
                    "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                    "Connection: close\r\n\r\n",
                    st, status_text(st), ctype, body.len);
  send_all(fd, head, (size_t)hl);
  send_all(fd, body.s ? body.s : "", body.len);
  buf_free(&body);
  if (st == 431) { /* the rest of a head we did not read: drained (bounded), so the client gets the answer, not a reset */
    shutdown(fd, SHUT_WR);
    size_t drained = 0;
    ssize_t r;
    while (drained < (1u << 20) && (r = recv(fd, req, MAX_REQUEST, 0)) > 0) drained += (size_t)r;
  }
}

int serve_run(const ServeSite *s, int port) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) {
    nct_error("report --serve: socket: %s", strerror(errno));
    return -1;
  }
  int one = 1;
  setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  struct sockaddr_in sa = {0};
  sa.sin_family = AF_INET;
  sa.sin_port = htons((uint16_t)port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK); /* 127.0.0.1 only, never another address */
  socklen_t sl = sizeof sa;
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 16) < 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
    nct_error("report --serve: 127.0.0.1:%d: %s", port, strerror(errno));
    close(fd);
    return -1;
  }
  struct sigaction act = {0}, old_int, old_term;
  act.sa_handler = on_signal; /* no SA_RESTART: accept returns EINTR */
  sigemptyset(&act.sa_mask);
  g_stop = 0;
  sigaction(SIGINT, &act, &old_int);
  sigaction(SIGTERM, &act, &old_term);
  printf("nctrace report: serving http://127.0.0.1:%d/ (Ctrl-C stops)\n", ntohs(sa.sin_port));
  fflush(stdout);
  while (!g_stop) {
    int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
    if (c < 0) {
      if (errno == EINTR || errno == ECONNABORTED) continue;
      nct_error("report --serve: accept: %s", strerror(errno));
      break;
    }
    struct timeval tv = {5, 0}; /* a silent client does not hold the server */
    setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    serve_one(s, c);
    close(c);
  }
  close(fd);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return g_stop ? 0 : -1;
}
