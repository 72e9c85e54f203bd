#include "tiny.h"

extern volatile int sink;

__attribute__((noinline, cold)) int rare(int x)
{
	return twice(x) - sink;
}
