// libgcrypt, for the SHA-256 of downloads (libsystemd, which libdbus loads, already maps it into hauld).
#include <gcrypt.h>
