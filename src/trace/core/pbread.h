/* pbread: a Perfetto protobuf trace read back as the Kineto JSON it stands
 * for, so that every nctrace command (and the reader's one JSON scanner)
 * reads it unchanged.
 *
 * ncrt's .pftrace (docs/design.md, "The binary trace";
 * docs/perfetto_subset.proto) carries its ranges as TrackEvents and
 * everything else as pieces of that JSON: the pieces, with each range
 * turned back into its JSON event in between, in file order, are the JSON
 * trace, byte for byte as the JSON writer writes it (each kind of range
 * gives its JSON once, in an "ncrt:" interned entry). Other Perfetto
 * traces are read as far as that subset goes: slices (SLICE_BEGIN/END,
 * paired on their track) and instants with their names, on the threads
 * their TrackDescriptors name, as user annotations, inside a JSON object
 * made up here; the rest of what they hold is skipped.
 *
 * Input: the file through zlib (a .pftrace.gz too). Ownership: the PbRead
 * owns its buffers; pbread_close frees them and closes nothing else. */
#ifndef NCT_PBREAD_H
#define NCT_PBREAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

typedef struct PbRead PbRead;

/* A range or mark handed over as it is, with no JSON text to scan (direct
 * mode, for reader.h's Visitor.on_direct): a push/pop range ("ph":"X",
 * "cat":"user_annotation") or a mark ("ph":"i"), whose JSON would be
 * {"ph":..,"cat":..,"name":NAME,"pid":..,"tid":..,"ts":..,"dur":.. REST.
 * The texts stay valid until pbread_close (a kind always gives the same). */
typedef struct {
  int64_t ts, dur;       /* ns; dur -1 for a mark */
  int64_t pid, tid;
  uint32_t track;        /* this reader's number for the (pid, tid) pair, from 0 */
  uint64_t kind;         /* this reader's key for the NAME and REST pair: below 2^32, one per definition */
  const char *name;      /* a JSON string */
  size_t name_n;
  const char *rest;      /* ,"depth":N[,"args":{...}]} */
  size_t rest_n;
} DirectEv;

/* Is this open file (nothing read from it yet) a Perfetto trace? Its
 * first bytes tell (a JSON trace starts with '{' or '[' after white space;
 * a Perfetto one with packet 1's tag, 0x0a), and so do the names Perfetto
 * gives its traces (.pftrace, .perfetto-trace, with .gz). gz is rewound. */
bool pbread_sniff(gzFile gz, const char *path);
PbRead *pbread_open(gzFile gz, const char *path);
/* Up to room bytes of JSON into dst: the count, 0 at the end, -1 on an
 * error (reported: "path: byte N: ..."). */
long pbread_read(PbRead *r, char *dst, size_t room);
/* Direct mode (reader.h, Visitor.on_direct): each range or mark is the
 * byte 0x01 in the JSON text, after its comma, and pbread_pop hands out
 * its DirectEv, in order. Set before the first read. */
void pbread_direct(PbRead *r);
bool pbread_pop(PbRead *r, DirectEv *e);
/* Bytes of the file read so far (for the progress bar) */
uint64_t pbread_offset(const PbRead *r);
void pbread_close(PbRead *r);

#endif
