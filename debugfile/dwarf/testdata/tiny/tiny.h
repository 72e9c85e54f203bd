int rare(int x);

static inline int twice(int x)
{
	return x + x;
}
