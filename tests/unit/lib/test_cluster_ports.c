/* The test clusters' ports (tests/lib/cluster.c): a port one test process
 * claimed is not handed to another while it runs, so a node stopped and
 * started again finds its port still free. */
#include <criterion/criterion.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/lib/cluster.h"

/* Whether another process can claim port now. */
static bool claimable_elsewhere(int port)
{
    pid_t pid = fork();
    cr_assert_geq(pid, 0);
    if (pid == 0) {
        _exit(cluster_claim_port(port) ? 0 : 1);
    }
    int status = 0;
    cr_assert_eq(waitpid(pid, &status, 0), pid);
    cr_assert(WIFEXITED(status));
    return WEXITSTATUS(status) == 0;
}

Test(cluster_ports, a_claimed_port_is_not_claimed_by_another_process)
{
    /* One that no running test holds. */
    int port = 20000 + (int)(getpid() % 12000);
    for (int i = 0; i < 100 && !claimable_elsewhere(port); i++) {
        port = 20000 + (port - 20000 + 1) % 12000;
    }
    cr_assert(claimable_elsewhere(port), "every port tried is held");
    cr_assert(cluster_claim_port(port));
    cr_assert_not(claimable_elsewhere(port), "port %d claimed twice", port);
}
