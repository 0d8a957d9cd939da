/* Local (AF_UNIX) socket paths under `rvnvmm run --root DIR`.
 *
 * With an argument, the host path of a socket listening outside the root,
 * it tries to leave the root through socket paths and prints one line per
 * attempt ("NAME: ok" or "NAME: errno NAME"): binds at "/../x",
 * "../../x", "/sub/../../../x" (all land inside the root), through a
 * symlink inside the root that points outside ("/link-out/x": the target
 * is not inside the root, ENOENT) and a relative one that stays inside;
 * connects to the outside socket by its host path, through the symlink and
 * by "/.."; a FIFO made at "/../x". Then what works inside the root gives
 * back the guest's paths: a listener at "/inside.sock" (getsockname), a
 * client's getpeername, a relative bind after chdir, a datagram's sender
 * in recvfrom, and an abstract socket, which is no path.
 * Without an argument (the emulator-specific suite runs it so) it only
 * checks that a local socket can be bound, connected and named in the
 * working directory.
 * Exit status: 0, or 1 if something that must work did not.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

static int failures;

static socklen_t un(struct sockaddr_un *a, const char *path)
{
    memset(a, 0, sizeof *a);
    a->sun_family = AF_UNIX;
    strncpy(a->sun_path, path, sizeof a->sun_path - 1);
    return offsetof(struct sockaddr_un, sun_path) + strlen(path) + 1;
}

static void report(const char *what, int r)
{
    if (r < 0)
        printf("%s: errno %s\n", what, strerrorname_np(errno));
    else
        printf("%s: ok\n", what);
}

static void try_bind(const char *path)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    socklen_t l = un(&a, path);
    char what[160];
    snprintf(what, sizeof what, "bind %s", path);
    report(what, bind(s, (struct sockaddr *)&a, l));
    close(s);
}

static void try_connect(const char *path)
{
    int s = socket(AF_UNIX, SOCK_STREAM, 0);
    struct sockaddr_un a;
    socklen_t l = un(&a, path);
    char what[300];
    snprintf(what, sizeof what, "connect %s", path);
    report(what, connect(s, (struct sockaddr *)&a, l));
    close(s);
}

/* Prints the name a call gives back. */
static void show(const char *what, struct sockaddr_un *a, socklen_t l)
{
    if (l <= offsetof(struct sockaddr_un, sun_path))
        printf("%s: (unnamed)\n", what);
    else if (a->sun_path[0] == 0)
        printf("%s: @%.*s\n", what, (int)(l - offsetof(struct sockaddr_un, sun_path) - 1),
               a->sun_path + 1);
    else
        printf("%s: %s (length %u)\n", what, a->sun_path, (unsigned)l);
}

static void must(int ok, const char *what)
{
    if (!ok) {
        printf("FAILED: %s (errno %s)\n", what, strerrorname_np(errno));
        failures++;
    }
}

int main(int argc, char **argv)
{
    struct sockaddr_un a, b;
    socklen_t l;
    if (argc < 2) {
        int s = socket(AF_UNIX, SOCK_STREAM, 0);
        unlink("jail_sockets.sock");
        must(bind(s, (struct sockaddr *)&a, un(&a, "jail_sockets.sock")) == 0, "bind");
        must(listen(s, 1) == 0, "listen");
        int c = socket(AF_UNIX, SOCK_STREAM, 0);
        must(connect(c, (struct sockaddr *)&a, un(&a, "jail_sockets.sock")) == 0, "connect");
        l = sizeof b;
        must(getsockname(s, (struct sockaddr *)&b, &l) == 0 &&
                 strcmp(b.sun_path, "jail_sockets.sock") == 0,
             "getsockname");
        unlink("jail_sockets.sock");
        return failures != 0;
    }
    const char *outside = argv[1];
    /* Leaving by "..": every one lands inside the root. */
    try_bind("/../escape1.sock");
    try_bind("../../escape2.sock");
    try_bind("/sub/../../../escape3.sock");
    /* Through symlinks: one pointing outside, one staying inside. */
    try_bind("/link-out/escape4.sock");
    try_bind("/sub/up/escape5.sock");
    /* The socket outside, by its host path, the symlink, and "..". */
    try_connect(outside);
    try_connect("/link-out/outside.sock");
    try_connect("/../outside.sock");
    report("mkfifo /../escape.fifo", mkfifo("/../escape.fifo", 0600));

    /* Inside the root: the guest's paths come back. */
    int srv = socket(AF_UNIX, SOCK_STREAM, 0);
    must(bind(srv, (struct sockaddr *)&a, un(&a, "/inside.sock")) == 0, "bind /inside.sock");
    must(listen(srv, 2) == 0, "listen");
    l = sizeof b;
    must(getsockname(srv, (struct sockaddr *)&b, &l) == 0, "getsockname");
    show("getsockname", &b, l);
    int cli = socket(AF_UNIX, SOCK_STREAM, 0);
    must(connect(cli, (struct sockaddr *)&a, un(&a, "/sub/../inside.sock")) == 0,
         "connect /sub/../inside.sock");
    l = sizeof b;
    must(getpeername(cli, (struct sockaddr *)&b, &l) == 0, "getpeername");
    show("getpeername", &b, l);
    l = sizeof b;
    int acc = accept(srv, (struct sockaddr *)&b, &l);
    must(acc >= 0, "accept");
    show("accept's peer", &b, l);
    l = sizeof b;
    must(getsockname(acc, (struct sockaddr *)&b, &l) == 0, "getsockname of accepted");
    show("accepted socket's name", &b, l);
    /* A relative name, bound from /sub. */
    must(chdir("/sub") == 0, "chdir /sub");
    int rel = socket(AF_UNIX, SOCK_STREAM, 0);
    must(bind(rel, (struct sockaddr *)&a, un(&a, "rel.sock")) == 0, "bind rel.sock");
    l = sizeof b;
    must(getsockname(rel, (struct sockaddr *)&b, &l) == 0, "getsockname rel");
    show("relative bind", &b, l);
    struct stat st;
    must(stat("/sub/rel.sock", &st) == 0 && S_ISSOCK(st.st_mode), "/sub/rel.sock is a socket");
    /* Datagrams: the sender's bound name arrives as the guest's. */
    int d1 = socket(AF_UNIX, SOCK_DGRAM, 0), d2 = socket(AF_UNIX, SOCK_DGRAM, 0);
    must(bind(d1, (struct sockaddr *)&a, un(&a, "/d1.sock")) == 0, "bind /d1.sock");
    must(bind(d2, (struct sockaddr *)&a, un(&a, "/d2.sock")) == 0, "bind /d2.sock");
    l = un(&a, "/d1.sock");
    must(sendto(d2, "hi", 2, 0, (struct sockaddr *)&a, l) == 2, "sendto /d1.sock");
    char buf[8];
    l = sizeof b;
    must(recvfrom(d1, buf, sizeof buf, 0, (struct sockaddr *)&b, &l) == 2, "recvfrom");
    show("datagram from", &b, l);
    /* An abstract name is no path: left alone. */
    int ab = socket(AF_UNIX, SOCK_STREAM, 0);
    memset(&a, 0, sizeof a);
    a.sun_family = AF_UNIX;
    memcpy(a.sun_path, "\0rvnvmm-jail-abstract", 22);
    must(bind(ab, (struct sockaddr *)&a, offsetof(struct sockaddr_un, sun_path) + 22) == 0,
         "bind abstract");
    l = sizeof b;
    must(getsockname(ab, (struct sockaddr *)&b, &l) == 0, "getsockname abstract");
    show("abstract", &b, l);
    return failures != 0;
}
