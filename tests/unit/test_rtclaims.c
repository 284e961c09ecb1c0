/* Unit tests for analyzer/rtclaims: one stack is shown once, whether two
 * descriptions reach it through one stack object or share its entries on a
 * thread; other stacks, other threads and the description's own other
 * stacks are not the same stack. */
#include "../../analyzer/rtclaims.h"

#define UNIT_GROUP "rtclaims"
#include "unit.h"

int main(void)
{
	struct an_rt_claims c = { 0 };
	const uint64_t first[] = { 0x1000, 0x1028, 0x1050 };
	const uint64_t other[] = { 0x2000, 0x2028 };
	const uint64_t tail[] = { 0x9000, 0x1050 };
	CHECK("nothing is claimed at first", !an_rt_claims_object(&c, 1, 0x500) &&
	      !an_rt_claims_entries(&c, 1, 7, first, 3));
	CHECK("a stack is recorded", an_rt_claims_add(&c, 0, 0x500, 7, first, 3) && c.n == 1);
	CHECK("its object is claimed for another description", an_rt_claims_object(&c, 1, 0x500));
	CHECK("not for the description itself", !an_rt_claims_object(&c, 0, 0x500) &&
	      !an_rt_claims_entries(&c, 0, 7, first, 3));
	CHECK("another object is not", !an_rt_claims_object(&c, 1, 0x600));
	CHECK("one shared entry on the thread is the same stack",
	      an_rt_claims_entries(&c, 1, 7, tail, 2));
	CHECK("on another thread it is not", !an_rt_claims_entries(&c, 1, 8, tail, 2));
	CHECK("other entries are another stack", !an_rt_claims_entries(&c, 1, 7, other, 2));
	CHECK("no entries are no stack", !an_rt_claims_entries(&c, 1, 7, NULL, 0));
	CHECK("a second stack is recorded", an_rt_claims_add(&c, 1, 0x700, 7, other, 2) && c.n == 2 &&
	      an_rt_claims_entries(&c, 0, 7, other, 2) && an_rt_claims_object(&c, 0, 0x700));
	an_rt_claims_deinit(&c);
	CHECK("deinit empties the claims", c.n == 0 && !an_rt_claims_object(&c, 1, 0x500));
	return unit_exit();
}
