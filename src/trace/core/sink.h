/* sink: where a trace reader hands the events it has finished reading.
 *
 * A reader (model.c's JSON loader; a binary-format reader may feed the same
 * interface) turns each complete event into an Ev (model.h) and gives it,
 * with ncrt's nesting depth, to model_put_event (model.h), which hands it
 * to the Model's sink. Without a sink
 * (Model.sink == NULL) the loader keeps every Ev in Trace.ev: the in-memory
 * path, which every command can analyse. With a sink, the loader keeps
 * nothing per event: the sink folds what it needs (stream.h: `summary` in
 * bounded memory) and may give up, after which the caller re-reads the
 * file into memory.
 *
 * The contract a reader keeps:
 *  - trace_begin before the first event of a file, trace_end after its last
 *    one and after every top-level member (metadata) of the file has been
 *    read and the start/end lanes folded (Trace.threads[i].lane_of is then
 *    the real thread's index), so that trace_end sees the whole Trace but
 *    Trace.ev (empty);
 *  - event once per complete event, in file order; e->thread indexes
 *    t->threads (lanes not folded yet: a start/end range may come on its
 *    lane's thread); e->dur >= 0; depth is the event's "depth" member (the
 *    number of ranges open below it on its thread when it was recorded) or
 *    -1 when the event has none; e->ord is its index in the file;
 *  - B/E pairs are not handed out: the reader calls give_up instead (their
 *    end is only known at the E, and a split pairing needs all of them).
 * Callbacks return 0 to go on, -1 to stop reading (the sink gave up and
 * says why in its own state; nothing is reported). */
#ifndef NCT_SINK_H
#define NCT_SINK_H

#include "model.h"

struct EvSink {
  void (*trace_begin)(EvSink *k, Trace *t);
  int (*event)(EvSink *k, Trace *t, const Ev *e, int64_t depth);
  int (*trace_end)(EvSink *k, Trace *t);
  /* the reader met what only the in-memory path reads (why: a static
   * string); always returns -1 */
  int (*give_up)(EvSink *k, const char *why);
};

#endif
