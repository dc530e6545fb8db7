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

/* Is this open file (nothing read from it yet) a Perfetto trace? Its
 * first bytes tell (a JSON trace starts with '{' or '[' after white space;
 * a Perfetto one with packet 1's tag, 0x0a), and so do the names Perfetto
 * gives its traces (.pftrace, .perfetto-trace, with .gz). gz is rewound. */
bool pbread_sniff(gzFile gz, const char *path);
PbRead *pbread_open(gzFile gz, const char *path);
/* Up to room bytes of JSON into dst: the count, 0 at the end, -1 on an
 * error (reported: "path: byte N: ..."). */
long pbread_read(PbRead *r, char *dst, size_t room);
/* Bytes of the file read so far (for the progress bar) */
uint64_t pbread_offset(const PbRead *r);
void pbread_close(PbRead *r);

#endif
