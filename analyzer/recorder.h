/* Flight-recorder rings recovered from a core.
 *
 * Two layouts are known (DESIGN.md, "Flight recorders"): the `recorder` C
 * library (list head `recorders`, found from .symtab or decoded from the
 * exported recorder_list()) and the original ELFE C++ recorder (list head
 * FlightRecorderBase::head, 32-bit indices, caller return addresses).  Struct
 * layouts come from the program's DWARF when present. */
#ifndef ANALYZER_RECORDER_H
#define ANALYZER_RECORDER_H

#include "analysis.h"
#include "../dwarf/dwarf.h"

/* Find every recorder ring in the core, recover its intact entries (from
 * max(0, writer - size) to writer - 1), format them, and fill
 * an->recorders / an->nrecorders and the timeline merged by order
 * (an->timeline).  Everything that cannot be trusted becomes a warning on
 * AN; nothing read from the core is followed unvalidated. */
void an_recorders_recover(struct dbg_session *s, struct analysis *an);

#endif
