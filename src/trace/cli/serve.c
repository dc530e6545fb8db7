/* serve: the report page and its windows over HTTP on 127.0.0.1 (serve.h).
 * One thread, one poll loop: every connection is a small state machine
 * (read its head, answer, drain), each with a deadline, so a silent or a
 * slow client, or a thousand idle ones, hold nobody else up (issue 42). */
#include "serve.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum {
  MAX_REQUEST = 16384, CAP_DEFAULT = 4000, CAP_MAX = 100000,
  MAX_BODY = 64 << 20,       /* one /events answer (the page is shared, never copied) */
  MAX_PENDING = 256 << 20,   /* /events answers not sent yet, all connections together */
  HEAD_MS = 10000,           /* a request's head, from the connection's accept (not restarted by a byte) */
  SEND_MS = 60000,           /* its answer sent */
  DRAIN_MS = 2000,           /* what the client still sends after the answer, read and dropped */
  MAX_CONN = 4096
};

const char SERVE_PAGE[] = "text/html; charset=utf-8";

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
  size_t body0 = body->len;
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
    if (body->len - body0 > MAX_BODY) { /* memory per request: bounded whatever the lanes and the cap */
      free(out);
      body->len = body0;
      return bad(body, "an answer over 64 MiB: ask fewer lanes (l0, l1) or a smaller cap"), 413;
    }
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
    *ctype = SERVE_PAGE; /* the body is s->page, not copied into body */
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
  case 302: return "Found";
  case 400: return "Bad Request";
  case 403: return "Forbidden";
  case 404: return "Not Found";
  case 405: return "Method Not Allowed";
  case 413: return "Content Too Large";
  case 503: return "Service Unavailable";
  default: return "Request Header Fields Too Large";
  }
}

/* ---- one request ---- */

/* The value of header `name` in the head (after the request line), trimmed;
 * NULL when absent. Its length in *n. */
static const char *header(const char *req, const char *name, size_t *n) {
  size_t nl = strlen(name);
  for (const char *l = strchr(req, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
    const char *h = l + 1;
    if (strncasecmp(h, name, nl) || h[nl] != ':') continue;
    const char *v = h + nl + 1, *e = v + strcspn(v, "\r\n");
    while (v < e && (*v == ' ' || *v == '\t')) v++;
    while (e > v && (e[-1] == ' ' || e[-1] == '\t')) e--;
    *n = (size_t)(e - v);
    return v;
  }
  return NULL;
}

/* This server's own names: a Host (or an Origin after "http://") that a
 * rebinding DNS name or another site cannot have */
static bool our_host(const char *v, size_t n, int port) {
  char want[64];
  static const char *const names[] = {"127.0.0.1", "localhost", "[::1]"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    int k = snprintf(want, sizeof want, "%s:%d", names[i], port);
    if ((size_t)k == n && !strncasecmp(v, want, n)) return true;
  }
  return false;
}

/* Equal, in a time that does not tell how much of it matched */
static bool same_secret(const char *a, const char *b, size_t n) {
  unsigned char d = 0;
  for (size_t i = 0; i < n; i++) d |= (unsigned char)(a[i] ^ b[i]);
  return d == 0;
}

int serve_request(const ServeSite *s, const char *token, int port, char *req, size_t got, Buf *body,
                  const char **ctype, const char **location) {
  *ctype = "application/json";
  *location = NULL;
  req[got] = 0;
  char *sp1 = strchr(req, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL, *eol = strchr(req, '\n');
  if (memchr(req, 0, got)) return bad(body, "a NUL byte in the request"), 400;
  if (!sp1 || !sp2 || (eol && sp2 > eol)) return bad(body, "not an HTTP request line"), 400;
  if (sp1 - req != 3 || memcmp(req, "GET", 3)) return bad(body, "only GET"), 405;
  char *crlf = strstr(req, "\r\n\r\n"), *lf = strstr(req, "\n\n");
  if (!crlf && !lf) return bad(body, "the request's head is too long"), 431;
  if (crlf && (!lf || crlf < lf)) crlf[2] = 0; /* the head ends there: nothing after it is a header */
  else lf[1] = 0;
  /* DNS rebinding: a page of another site whose name now points here
   * sends its own Host; a page of another origin sends its Origin */
  size_t hn, on;
  const char *host = header(req, "Host", &hn), *origin = header(req, "Origin", &on);
  if (!host || !our_host(host, hn, port)) return bad(body, "a Host that is not this server's (127.0.0.1:PORT)"), 403;
  if (origin && !(on > 7 && !strncasecmp(origin, "http://", 7) && our_host(origin + 7, on - 7, port)))
    return bad(body, "a request from another origin"), 403;
  *sp2 = 0;
  const char *target = sp1 + 1;
  if (!strcmp(target, "/favicon.ico")) return 204; /* none: the browser asks for it (no token: it has none) */
  /* every other path starts with the token the URL printed gives */
  size_t tl = strlen(token);
  if (target[0] != '/' || strlen(target + 1) < tl || !same_secret(target + 1, token, tl))
    return bad(body, "no token: open the URL nctrace printed"), 403;
  target += 1 + tl;
  if (!*target) { /* /TOKEN: the page's relative requests need the '/' */
    *location = "/";
    return 302;
  }
  if (*target != '/') return bad(body, "no token: open the URL nctrace printed"), 403;
  return serve_answer(s, target, body, ctype);
}

/* ---- the connections ---- */

static volatile sig_atomic_t g_stop;
static void on_signal(int sig) { (void)sig; g_stop = 1; }

static int64_t now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

enum { C_HEAD, C_SEND, C_DRAIN };

typedef struct {
  int fd, state;
  int64_t deadline;
  char *req; /* MAX_REQUEST + 1 */
  size_t got;
  Buf out;           /* the status line and headers, then the body unless it is the page's */
  const char *extra; /* the page, sent from where it is */
  size_t extra_n, sent, drained;
} Conn;

typedef struct {
  const ServeSite *s;
  char token[33];
  int port;
  VEC(Conn) c;
  size_t pending; /* bytes of out not sent yet, all connections */
} Server;

static void conn_close(Server *sv, size_t i) {
  Conn *c = &sv->c.v[i];
  sv->pending -= c->out.len;
  close(c->fd);
  free(c->req);
  buf_free(&c->out);
  sv->c.v[i] = sv->c.v[--sv->c.n];
}

/* The head is in (or the client stopped sending): the answer, queued */
static void conn_answer(Server *sv, Conn *c) {
  Buf body = {0};
  const char *ctype = "application/json", *location = NULL;
  int st;
  if (sv->pending > MAX_PENDING) st = 503, bad(&body, "busy: too many answers not read yet");
  else st = serve_request(sv->s, sv->token, sv->port, c->req, c->got, &body, &ctype, &location);
  size_t blen = body.len;
  if (st == 200 && ctype == SERVE_PAGE) { /* the page: sent from where it is, never copied */
    c->extra = sv->s->page;
    c->extra_n = blen = sv->s->page_len;
  }
  buf_printf(&c->out, "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nCache-Control: no-store\r\n"
                      "X-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n",
             st, status_text(st), ctype, blen);
  if (location) buf_printf(&c->out, "Location: /%s%s\r\n", sv->token, location);
  buf_puts(&c->out, "Connection: close\r\n\r\n");
  if (body.len) buf_add(&c->out, body.s, body.len);
  buf_free(&body);
  sv->pending += c->out.len;
  free(c->req);
  c->req = NULL;
  c->state = C_SEND;
  c->deadline = now_ms() + SEND_MS;
}

static bool head_done(const Conn *c) {
  return c->got >= MAX_REQUEST || strstr(c->req, "\r\n\r\n") || strstr(c->req, "\n\n");
}

/* What the connection can do now: false when it is over */
static bool conn_step(Server *sv, Conn *c, short rev) {
  if (c->state == C_HEAD && rev & (POLLIN | POLLHUP | POLLERR)) {
    ssize_t r = recv(c->fd, c->req + c->got, MAX_REQUEST - c->got, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (r < 0 || (r == 0 && !c->got)) return false;
    c->got += (size_t)r;
    c->req[c->got] = 0;
    if (r == 0 || head_done(c)) conn_answer(sv, c);
    return true;
  }
  if (c->state == C_SEND && rev & (POLLOUT | POLLHUP | POLLERR)) {
    for (;;) {
      const char *p;
      size_t n;
      if (c->sent < c->out.len) p = c->out.s + c->sent, n = c->out.len - c->sent;
      else if (c->sent < c->out.len + c->extra_n) p = c->extra + (c->sent - c->out.len), n = c->out.len + c->extra_n - c->sent;
      else break;
      ssize_t w = send(c->fd, p, n, MSG_NOSIGNAL);
      if (w < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      if (w <= 0) return false; /* the client went away: its loss */
      c->sent += (size_t)w;
    }
    /* all sent: the client gets it before a close with unread bytes resets the connection */
    sv->pending -= c->out.len;
    buf_free(&c->out);
    c->sent = c->extra_n = 0;
    shutdown(c->fd, SHUT_WR);
    c->state = C_DRAIN;
    c->deadline = now_ms() + DRAIN_MS;
    return true;
  }
  if (c->state == C_DRAIN && rev & (POLLIN | POLLHUP | POLLERR)) {
    char sink[4096];
    ssize_t r = recv(c->fd, sink, sizeof sink, 0);
    if (r < 0 && (errno == EAGAIN || errno == EINTR)) return true;
    if (r <= 0 || (c->drained += (size_t)r) > (1u << 20)) return false;
  }
  return true;
}

static int make_token(char *out) {
  unsigned char b[16];
  size_t k = 0;
  while (k < sizeof b) {
    ssize_t r = getrandom(b + k, sizeof b - k, 0);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return -1;
    k += (size_t)r;
  }
  for (size_t i = 0; i < sizeof b; i++) snprintf(out + 2 * i, 3, "%02x", b[i]);
  return 0;
}

int serve_run(const ServeSite *s, int port) {
  Server sv = {.s = s};
  if (make_token(sv.token) < 0) {
    nct_error("report --serve: no random token: %s", strerror(errno));
    return -1;
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
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
  if (bind(fd, (struct sockaddr *)&sa, sizeof sa) < 0 || listen(fd, 1024) < 0 ||
      getsockname(fd, (struct sockaddr *)&sa, &sl) < 0) {
    nct_error("report --serve: 127.0.0.1:%d: %s", port, strerror(errno));
    close(fd);
    return -1;
  }
  sv.port = ntohs(sa.sin_port);
  /* room for many idle connections: the soft descriptor limit up to the hard one */
  struct rlimit rl;
  size_t max_conn = 64;
  if (getrlimit(RLIMIT_NOFILE, &rl) == 0) {
    if (rl.rlim_cur < rl.rlim_max && rl.rlim_cur < MAX_CONN + 64) {
      rl.rlim_cur = rl.rlim_max < MAX_CONN + 64 ? rl.rlim_max : MAX_CONN + 64;
      setrlimit(RLIMIT_NOFILE, &rl);
      getrlimit(RLIMIT_NOFILE, &rl);
    }
    if (rl.rlim_cur > 128) max_conn = rl.rlim_cur - 64 < MAX_CONN ? (size_t)rl.rlim_cur - 64 : MAX_CONN;
  }
  struct sigaction act = {0}, old_int, old_term;
  act.sa_handler = on_signal; /* no SA_RESTART: poll returns EINTR */
  sigemptyset(&act.sa_mask);
  g_stop = 0;
  sigaction(SIGINT, &act, &old_int);
  sigaction(SIGTERM, &act, &old_term);
  printf("nctrace report: serving http://127.0.0.1:%d/%s/ (Ctrl-C stops)\n", sv.port, sv.token);
  fflush(stdout);
  struct pollfd *pf = xmalloc((max_conn + 1) * sizeof *pf);
  int rc = 0;
  while (!g_stop) {
    int64_t now = now_ms(), wait = 1000;
    for (size_t i = 0; i < sv.c.n;) { /* past their deadline: closed, whatever they were doing */
      if (sv.c.v[i].deadline <= now) {
        conn_close(&sv, i);
        continue;
      }
      if (sv.c.v[i].deadline - now < wait) wait = sv.c.v[i].deadline - now;
      i++;
    }
    pf[0] = (struct pollfd){fd, POLLIN, 0};
    for (size_t i = 0; i < sv.c.n; i++)
      pf[i + 1] = (struct pollfd){sv.c.v[i].fd, sv.c.v[i].state == C_SEND ? POLLOUT : POLLIN, 0};
    int n = poll(pf, sv.c.n + 1, (int)wait);
    if (n < 0) {
      if (errno == EINTR) continue;
      nct_error("report --serve: poll: %s", strerror(errno));
      rc = -1;
      break;
    }
    size_t nc = sv.c.n;
    for (size_t i = nc; i-- > 0;) /* from the end: a close moves the last one into i */
      if (pf[i + 1].revents && !conn_step(&sv, &sv.c.v[i], pf[i + 1].revents)) conn_close(&sv, i);
    if (!(pf[0].revents & POLLIN)) continue;
    for (;;) {
      int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
      if (c < 0) {
        if (errno == EAGAIN || errno == EINTR) break;
        /* out of descriptors: the connection nearest its deadline makes
         * room (else poll would wake at once, again and again); any other
         * error: said once, and the server goes on */
        if ((errno == EMFILE || errno == ENFILE) && sv.c.n) {
          size_t old = 0;
          for (size_t i = 1; i < sv.c.n; i++)
            if (sv.c.v[i].deadline < sv.c.v[old].deadline) old = i;
          conn_close(&sv, old);
          continue;
        }
        static bool said;
        if (!said && errno != ECONNABORTED && errno != EPROTO) nct_warning("report --serve: accept: %s", strerror(errno));
        said = true;
        break;
      }
      if (sv.c.n >= max_conn) { /* full: the connection nearest its deadline makes room */
        size_t old = 0;
        for (size_t i = 1; i < sv.c.n; i++)
          if (sv.c.v[i].deadline < sv.c.v[old].deadline) old = i;
        conn_close(&sv, old);
      }
      Conn k = {c, C_HEAD, now_ms() + HEAD_MS, xmalloc(MAX_REQUEST + 1), 0, {0}, NULL, 0, 0, 0};
      k.req[0] = 0;
      vec_push(&sv.c, k);
    }
  }
  while (sv.c.n) conn_close(&sv, sv.c.n - 1);
  free(pf);
  vec_free(&sv.c);
  close(fd);
  sigaction(SIGINT, &old_int, NULL);
  sigaction(SIGTERM, &old_term, NULL);
  return g_stop && !rc ? 0 : -1;
}
