/* serve: `nctrace report --serve` -- the report page over HTTP on
 * 127.0.0.1 only, with the events of any window at full detail.
 *
 * GET / (or /index.html) answers the page as report.c wrote it (with its
 * "serve" member, so its script asks for windows). GET /events?a=A&b=B
 * [&cap=N][&l0=L0&l1=L1] answers, for each of the page's lanes L0 <= l <
 * L1 (default: all), the events overlapping [A, B] (ns on the page's
 * clock, window.h's closed-interval rule) as JSON:
 *   {"a":A,"b":B,"l0":L0,"lanes":[LANE...]}
 * LANE is null when more than cap events (default 4000, 1..100000) of that
 * lane overlap, else a flat list "ts,dur,name,ord,corr,bytes" per event
 * in start order (ts on the page's clock, ns; name the page's name index;
 * ord the event's index in its file's traceEvents; corr and bytes -1 when
 * absent). /favicon.ico: 204, no icon. A malformed request is answered
 * 400 with {"error": "..."},
 * an unknown path 404, a method other than GET 405; nothing stops the server
 * but SIGINT or SIGTERM (then serve_run returns 0). One request per
 * connection (Connection: close), many connections at once.
 *
 * Access (issue 42): every path but /favicon.ico starts with a random
 * token (/TOKEN/, /TOKEN/events?...), printed in the URL, so another local
 * user cannot read the page; the Host must be this server's and an Origin,
 * when sent, too, so a web page cannot read it by DNS rebinding: else 403.
 * A request's head must come within 10 s of the connection (its answer
 * sent within 60 s); an /events answer over 64 MiB is 413.
 *
 * The site borrows everything it points to. */
#ifndef NCT_SERVE_H
#define NCT_SERVE_H

#include "util.h"
#include "window.h"

typedef struct {
  const char *page;
  size_t page_len;
  const WinLane *lanes;
  size_t nlanes;
  const int64_t *shift;     /* per lane: the trace's ts + shift = the page's clock */
  const int64_t *page_name; /* Model.names id -> the page's name index */
} ServeSite;

/* Listen on 127.0.0.1:port (0: any free port), print the URL on stdout
 * (http://127.0.0.1:PORT/TOKEN/), answer until SIGINT/SIGTERM. 0, or -1
 * after saying why (bind, listen). */
int serve_run(const ServeSite *s, int port);

/* The page's content type: *ctype is this very pointer when the answer is
 * the page, whose body is then s->page (nothing put in body). */
extern const char SERVE_PAGE[];

/* The answer to one request target after the token ("/events?a=1&b=2"):
 * its HTTP status, the body in *body, its content type in *ctype. */
int serve_answer(const ServeSite *s, const char *target, Buf *body, const char **ctype);

/* The answer to one request's head (req[0..got), req[got] writable, NUL put
 * there), as the server checks it: the request line (GET only), a Host of
 * 127.0.0.1, localhost or [::1] with this port, no Origin but this
 * server's, the token as the path's first segment (else 403; /TOKEN alone:
 * 302 to /TOKEN/, *location "/"), then serve_answer. */
int serve_request(const ServeSite *s, const char *token, int port, char *req, size_t got, Buf *body,
                  const char **ctype, const char **location);

#endif
