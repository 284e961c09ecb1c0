/* Unit tests for analyzer/addrset: membership, order, zero, growth. */
#include "../../analyzer/addrset.h"

#define UNIT_GROUP "addrset"
#include "unit.h"

int main(void)
{
	struct an_addr_set set = { 0 };
	CHECK("empty set has nothing", !an_addr_set_has(&set, 0x1000) && !an_addr_set_has(&set, 0));
	bool ok = true;
	/* Addresses 4 KiB apart collide in a naive hash; 10,000 forces several rehashes. */
	for (uint64_t i = 1; i <= 10000; i++)
		ok = ok && an_addr_set_add(&set, i << 12) == 1;
	CHECK("10000 distinct addresses are added", ok && set.n == 10000);
	ok = true;
	for (uint64_t i = 1; i <= 10000; i++)
		ok = ok && an_addr_set_has(&set, i << 12) && an_addr_set_add(&set, i << 12) == 0;
	CHECK("each is found and not added twice", ok && set.n == 10000);
	CHECK("absent addresses are absent", !an_addr_set_has(&set, 0x1001) &&
	      !an_addr_set_has(&set, (uint64_t)10001 << 12));
	ok = true;
	for (size_t i = 0; i < set.n; i++)
		ok = ok && set.v[i] == (uint64_t)(i + 1) << 12;
	CHECK("members keep insertion order", ok);
	CHECK("zero is a member like any other", an_addr_set_add(&set, 0) == 1 &&
	      an_addr_set_has(&set, 0) && an_addr_set_add(&set, 0) == 0);
	an_addr_set_deinit(&set);
	CHECK("deinit empties the set", set.n == 0 && !an_addr_set_has(&set, 0x1000) &&
	      an_addr_set_add(&set, 0x1000) == 1);
	an_addr_set_deinit(&set);
	return unit_exit();
}
