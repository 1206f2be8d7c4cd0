/* `cairn reassign plan|execute|status|cancel` and `cairn brokers
 * decommission`: partition reassignment through the controllers' RPCs
 * (AlterReassignments, ListReassignments, UnregisterBroker), with plans
 * from cli/cmd/reassign/reassign_plan.h. One thread. */
#ifndef CAIRN_CLI_REASSIGN_H
#define CAIRN_CLI_REASSIGN_H

#include <stdio.h>

void reassign_usage(FILE *out);
void brokers_usage(FILE *out);

/* argv[0] is "reassign" / "brokers"; controllers is the voters list.
 * Returns the exit code. */
int reassign_main(int argc, char **argv, const char *controllers);
int brokers_main(int argc, char **argv, const char *controllers);

#endif
