// peak_rss_launcher OUT PROGRAM [ARGS...] — runs PROGRAM and writes its peak
// resident set size in KiB to the file OUT; exits with PROGRAM's status.
//
// Why a launcher: Linux carries a process's RSS high-water mark across fork
// and exec, so a child started directly by a large test process reports the
// test's peak, not its own. Forked from this small process, PROGRAM's
// ru_maxrss is its own.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: peak_rss_launcher OUT PROGRAM [ARGS...]\n");
    return 125;
  }
  const pid_t pid = fork();
  if (pid < 0) return 126;
  if (pid == 0) {
    execv(argv[2], argv + 2);
    _exit(127);
  }
  int status = 0;
  struct rusage usage {};
  if (wait4(pid, &status, 0, &usage) != pid) return 126;
  if (FILE* out = std::fopen(argv[1], "w")) {
    std::fprintf(out, "%ld\n", usage.ru_maxrss);
    std::fclose(out);
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
