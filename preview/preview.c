/*
 * factory-preview: placeholder until the proxy lands (issue 28).
 */
#include "factory.h"
#include "log.h"

int
main(int argc, char *argv[])
{
	(void)proc_child_init(PROC_PREVIEW, argc, argv);
	fatalx("preview: not built yet");
}
