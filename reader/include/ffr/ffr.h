/* ffr.h: the C API of the FFRecord reader and shard writer.
 *
 * For programs that are not C++ (or that want a stable ABI): opaque handles,
 * integer error codes and caller-owned buffers. It wraps ffr::Reader and
 * ffr::ShardWriter; see docs/reader.md.
 *
 * Errors: every function that can fail returns an ffr_code. FFR_OK is 0; on
 * failure ffr_last_error() gives the message of the most recent failing call
 * on the calling thread, which names the file, the sample and what is wrong
 * ("Corruption: d/PART_00000.ffr sample 3 (index 3): checksum mismatch ...").
 * Successful calls leave it unchanged.
 *
 * Thread safety: a reader may be used by many threads at once (each thread's
 * reads go through its own io_uring ring). A writer belongs to one thread at
 * a time.
 */
#ifndef FFR_FFR_H_
#define FFR_FFR_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The values of ffr::Status::Code. */
typedef enum ffr_code {
  FFR_OK = 0,
  FFR_NOT_FOUND = 1,
  FFR_CORRUPTION = 2,
  FFR_IO_ERROR = 3,
  FFR_INVALID_ARGUMENT = 4,
  FFR_ALREADY_EXISTS = 5,
  FFR_NOT_SUPPORTED = 6,
  FFR_ABORTED = 7
} ffr_code;

/* The values of ffr::IoBackend. */
typedef enum ffr_backend {
  FFR_BACKEND_AUTO = 0, /* io_uring when the kernel allows it, else pread */
  FFR_BACKEND_IO_URING = 1,
  FFR_BACKEND_PREAD = 2,
  FFR_BACKEND_MMAP = 3  /* views of the mapped shards: warm-cache reads without copies */
} ffr_backend;

/* Mirrors ffr::ReaderOptions. Fill it with ffr_reader_options_init(), then
 * change what you need, so that fields added later keep their defaults. */
typedef struct ffr_reader_options {
  ffr_backend backend;  /* default FFR_BACKEND_AUTO */
  int direct_io;        /* nonzero: O_DIRECT reads, bypassing the page cache; default 0 */
  int verify_checksums; /* nonzero: check each sample's CRC-32; default 1 */
  int verify_header;    /* nonzero: check each shard's header CRC at open; default 1 */
  unsigned queue_depth; /* most reads in flight on one ring; default 128 */
} ffr_reader_options;

typedef struct ffr_reader ffr_reader;
typedef struct ffr_writer ffr_writer;

/* The message of the most recent failing ffr_ call on this thread, or "" if
 * none failed yet. Valid until the next failing call on this thread. */
const char* ffr_last_error(void);

/* "OK", "Not found", "Corruption", ... ; "Unknown" for other values. */
const char* ffr_code_name(int code);

/* zlib's CRC-32 of n bytes, the checksum the shards store. */
uint32_t ffr_crc32(const void* data, size_t n);

/* ---- Reader ---- */

void ffr_reader_options_init(ffr_reader_options* options);

/* Opens `path`, a shard file or a directory whose "*.ffr" files are the
 * shards (sorted by name). `options` may be NULL for the defaults. On success
 * *out is a reader to pass to ffr_reader_close(). */
int ffr_reader_open(const char* path, const ffr_reader_options* options, ffr_reader** out);

/* Closes the reader; NULL is allowed. No read may be running on it. */
void ffr_reader_close(ffr_reader* reader);

/* The number of samples over all shards. */
int64_t ffr_reader_size(const ffr_reader* reader);

/* "io_uring", "pread" or "mmap": the backend in use. */
const char* ffr_reader_backend(const ffr_reader* reader);

/* The size in bytes and the stored CRC-32 of sample `index`. */
int ffr_reader_sample_size(const ffr_reader* reader, int64_t index, uint64_t* size);
int ffr_reader_sample_crc(const ffr_reader* reader, int64_t index, uint32_t* crc);

/* Reads sample `index` into dst, which holds `capacity` bytes; *size (may be
 * NULL) receives the sample's size. Fails with FFR_INVALID_ARGUMENT, reading
 * nothing, when the sample is larger than capacity. */
int ffr_reader_read(const ffr_reader* reader, int64_t index, void* dst, uint64_t capacity, uint64_t* size);

/* Reads `count` samples in one batch: sample indices[k] goes to dsts[k],
 * which holds capacities[k] bytes (see ffr_reader_sample_size). Duplicate
 * indices are allowed. On failure the contents of dsts are unspecified. */
int ffr_reader_read_batch(const ffr_reader* reader, const int64_t* indices, size_t count, void* const* dsts,
                          const uint64_t* capacities);

/* Called once per sample of a stream, in completion order: k is its position
 * in `indices`; `data` is valid only during the call. Return 0 to go on; any
 * other value stops the stream, which then fails with FFR_ABORTED. */
typedef int (*ffr_stream_consumer)(void* user, size_t k, const void* data, uint64_t size);

/* Reads `count` samples keeping the queue depth's worth of reads in flight the
 * whole time (Reader::ReadStream), handing each to `consume` as it lands. */
int ffr_reader_read_stream(const ffr_reader* reader, const int64_t* indices, size_t count,
                           ffr_stream_consumer consume, void* user);

/* ---- Shard writer ----
 * Writes one shard of exactly `count` samples to "<path>.tmp" and renames it
 * to `path` on finish, so that a crash never leaves a partial `path`. Every
 * writer ends with exactly one call to ffr_writer_finish() or
 * ffr_writer_abort(), which both free it. */

int ffr_writer_create(const char* path, int64_t count, ffr_writer** out);
/* The same with every sample starting at a multiple of `sample_alignment`
 * bytes (0: none; else a power of two from 512 to 1 MiB): samples are padded
 * with zeros that belong to them (docs/format.md), so that O_DIRECT reads
 * fetch only their own blocks; 4096 suits most disks. */
int ffr_writer_create_aligned(const char* path, int64_t count, uint64_t sample_alignment, ffr_writer** out);
int ffr_writer_append(ffr_writer* writer, const void* data, size_t size);

/* Writes the header, syncs and renames. Frees the writer even when it fails
 * (the temporary file is then removed). */
int ffr_writer_finish(ffr_writer* writer);

/* Discards the samples written so far and frees the writer; NULL is allowed. */
void ffr_writer_abort(ffr_writer* writer);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FFR_FFR_H_ */
