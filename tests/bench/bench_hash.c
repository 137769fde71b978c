/* bench_hash: print the sha256 of a file through uh_sha256_fd, as
 * `sha256sum` would (compiled and timed by bench_hash.sh). */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include "hash.h"

int main(int argc, char **argv)
{
  char hex[UH_SHA256_HEXLEN + 1];
  int fd;
  if (argc != 2) {
    fprintf(stderr, "usage: bench_hash FILE\n");
    return 2;
  }
  fd = open(argv[1], O_RDONLY | O_CLOEXEC);
  if (fd < 0 || uh_sha256_fd(fd, hex) != 0) {
    perror(argv[1]);
    return 1;
  }
  close(fd);
  printf("%s  %s\n", hex, argv[1]);
  return 0;
}
