/* cat_sample: prints the size and CRC-32 of one sample of an FFRecord shard
 * (or directory of shards), using the C API.
 *
 *   ffr_cat_sample <shard.ffr | dir> <index>
 *
 * Prints "<index> <size> <crc32 in hex>"; the read checks the CRC. */
#include <stdio.h>
#include <stdlib.h>

#include "ffr/ffr.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s <shard.ffr | dir> <index>\n", argv[0]);
    return 2;
  }
  const int64_t index = strtoll(argv[2], NULL, 10);
  ffr_reader* reader = NULL;
  uint64_t size = 0;
  void* data = NULL;
  int rc = ffr_reader_open(argv[1], NULL, &reader);
  if (rc == FFR_OK) rc = ffr_reader_sample_size(reader, index, &size);
  if (rc == FFR_OK) {
    data = malloc(size > 0 ? size : 1);
    rc = ffr_reader_read(reader, index, data, size, &size);
  }
  if (rc == FFR_OK) printf("%lld %llu %08x\n", (long long)index, (unsigned long long)size, ffr_crc32(data, size));
  else fprintf(stderr, "%s\n", ffr_last_error());
  free(data);
  ffr_reader_close(reader);
  return rc == FFR_OK ? 0 : 1;
}
