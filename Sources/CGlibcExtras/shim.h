// glibc functions that Swift's Glibc module leaves out.
#include <malloc.h>
#include <stdint.h>

// <fcntl.h> declares these only under _GNU_SOURCE, which the Glibc module is built without.
int sync_file_range(int fd, int64_t offset, int64_t nbytes, unsigned int flags);
static const unsigned int HAUL_SYNC_FILE_RANGE_WRITE = 2;
int fallocate(int fd, int mode, int64_t offset, int64_t len);
// <linux/falloc.h>: allocate without changing the file's size.
static const int HAUL_FALLOC_FL_KEEP_SIZE = 1;
// <stdio.h> declares renameat2 only under _GNU_SOURCE; <linux/fs.h>: swap the two names atomically.
int renameat2(int olddirfd, const char *oldpath, int newdirfd, const char *newpath, unsigned int flags);
static const unsigned int HAUL_RENAME_EXCHANGE = 2;
// <unistd.h> declares syncfs only under _GNU_SOURCE.
int syncfs(int fd);
// The loop of a bus connection's thread (DBusKit's BusLoop).
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <pthread.h>
// <pthread.h> declares it only under _GNU_SOURCE.
int pthread_setname_np(pthread_t thread, const char *name);
