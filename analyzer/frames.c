#include "frames.h"
#include "display.h"

#include <stdlib.h>
#include <string.h>

#include "../corefile/array.h"

static struct an_frame *list_push(struct an_frame_list *list)
{
	return core_array_push(&list->frames, &list->n, &list->cap, sizeof(*list->frames));
}

bool an_frames_append_pc(struct an_frame_list *list, struct dbg_session *s, uint64_t pc,
			 bool activation, enum an_frame_kind kind, const struct dbg_frame *native,
			 bool seam)
{
	struct dbg_location *locs;
	size_t nlocs;
	if (dbg_symbolize(s, pc, activation, &locs, &nlocs))
		return false;
	for (size_t i = 0; i < nlocs; i++) {
		struct an_frame *f = list_push(list);
		if (!f) {
			dbg_locations_free(locs, nlocs);
			return false;
		}
		struct dbg_location *l = &locs[i];
		f->kind = kind;
		f->pc = pc;
		f->activation = activation;
		f->function = l->function;
		f->display = an_display_name(f->function);
		f->offset = l->offset;
		f->has_offset = l->has_offset;
		f->module = l->module;
		f->module_offset = l->module_offset;
		f->has_module_offset = l->has_module_offset;
		f->file = l->file;
		f->line = l->line;
		f->inlined = l->inlined;
		f->inline_depth = l->inline_depth;
		if (native) {
			f->cfa = native->cfa;
			memcpy(f->regs, native->regs, sizeof(f->regs));
			f->regs_known = native->regs_known;
		}
		f->seam = seam && i == 0;
		l->function = l->module = l->file = NULL;  /* moved into the frame */
	}
	dbg_locations_free(locs, nlocs);
	return true;
}

void an_frames_move_to(struct an_frame_list *list, struct an_frame **frames, size_t *nframes)
{
	*frames = list->frames;
	*nframes = list->n;
	list->frames = NULL;
	list->n = list->cap = 0;
}

void an_frames_list_deinit(struct an_frame_list *list)
{
	for (size_t i = 0; i < list->n; i++)
		an_frame_deinit(&list->frames[i]);
	free(list->frames);
	list->frames = NULL;
	list->n = list->cap = 0;
}
