/* The HTML crash page of one analysis (DESIGN.md "HTML"): the header and
 * abort message, the crashing thread first, the recorder timeline as an SVG
 * chart, the other threads collapsed, suspended chains, bthreads,
 * goroutines, modules and warnings.  Written from struct analysis only; every string that came from
 * the core or a binary goes through rep_html_text(). */
#include "html.h"
#include "report.h"
#include "taskgroups.h"
#include "waitgroups.h"
#include "bytes.h"
#include "source.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strlist.h"

/* Events drawn in the timeline chart (the most recent ones) and listed in
 * its table: a ring of many thousands would make a page nobody can read. */
enum { CHART_MAX_EVENTS = 2000, TABLE_MAX_EVENTS = 50 };

static const char style_sheet[] =
	":root{--bg:#f6f7f9;--fg:#1d1f24;--muted:#646b78;--card:#fff;--line:#dfe2e8;"
	"--crash:#c62828;--crashbg:#fdecea;--async:#7b1fa2;--asyncbg:#f6ecf9;--seam:#00796b;"
	"--seambg:#e0f2f1;--warn:#7a5b00;--warnbg:#fff6d6;--link:#1557b0;"
	"--mono:ui-monospace,\"SFMono-Regular\",Menlo,Consolas,\"DejaVu Sans Mono\",\"Liberation Mono\",monospace}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);"
	"font:15px/1.45 system-ui,-apple-system,\"Segoe UI\",Roboto,\"DejaVu Sans\",\"Liberation Sans\",sans-serif}\n"
	"main{max-width:1240px;margin:0 auto;padding:18px 22px 32px}\n"
	"main.wide{max-width:1840px}\n"
	"a{color:var(--link)}\n"
	"a.fnlink{color:inherit;text-decoration:none}a.fnlink:hover{text-decoration:underline}\n"
	"nav.site{display:flex;flex-wrap:wrap;gap:8px 18px;align-items:center;margin:0 0 14px}\n"
	"nav.site input[type=search]{min-width:16em}\n"
	"form.filters{display:flex;flex-wrap:wrap;gap:6px 12px;margin:10px 0 0;font-size:13px}\n"
	"form.filters label{color:var(--muted)}\n"
	"code,.mono{font-family:var(--mono);font-size:.92em}\n"
	"header.top{background:var(--card);border:1px solid var(--line);border-left:6px solid var(--crash);"
	"border-radius:8px;padding:14px 18px}\n"
	"header.top.quiet{border-left-color:var(--link)}\n"
	"h1{font-size:1.45em;margin:0 0 4px;overflow-wrap:anywhere}\n"
	"h1 .sig{color:var(--crash)}\n"
	".sub{color:var(--muted);margin:0;overflow-wrap:anywhere}\n"
	"dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:3px 16px;margin:12px 0 0}\n"
	"dl.facts dt{color:var(--muted)}\n"
	"dl.facts dd{margin:0;font-family:var(--mono);font-size:.9em;overflow-wrap:anywhere}\n"
	".abort{margin:12px 0 0;padding:8px 12px;background:var(--crashbg);border-radius:6px;"
	"font-family:var(--mono);font-size:.9em;white-space:pre-wrap;overflow-wrap:anywhere}\n"
	".abort b{font-family:system-ui,sans-serif;color:var(--crash)}\n"
	".cause{margin:0 0 6px;font-size:1.1em;font-weight:600;overflow-wrap:anywhere}\n"
	".cause b{color:var(--crash)}\n"
	"nav{margin:14px 0 0;display:flex;flex-wrap:wrap;gap:6px 16px;font-size:.92em}\n"
	"section{margin-top:24px}\n"
	"h2{font-size:1.12em;margin:0 0 8px;padding-bottom:4px;border-bottom:1px solid var(--line)}\n"
	"h2 .n{color:var(--muted);font-weight:normal}\n"
	"ol.frames{list-style:none;margin:0;padding:0;background:var(--card);border:1px solid var(--line);"
	"border-radius:8px;overflow:hidden}\n"
	"ol.frames>li{padding:6px 12px;border-top:1px solid var(--line);font-family:var(--mono);font-size:13px}\n"
	"ol.frames>li:first-child{border-top:0}\n"
	"li.frame .idx{color:var(--muted);display:inline-block;min-width:2.8em}\n"
	"li.frame .fn{font-weight:600;overflow-wrap:anywhere}\n"
	"li.frame .args{color:#37474f;overflow-wrap:anywhere}\n"
	"li.frame .arg .v{color:#0d47a1}\n"
	"li.frame .loc{color:var(--muted);padding-left:2.8em;overflow-wrap:anywhere}\n"
	"li.frame .src{color:var(--fg)}\n"
	".context{margin:4px 0 2px 2.8em;padding:2px 0;background:var(--card);border:1px solid var(--line);"
	"border-radius:4px;font-size:12px;overflow-x:auto}\n"
	".context .sl{white-space:pre;padding:0 8px 0 0}\n"
	".context .ln{display:inline-block;min-width:3.2em;padding-right:10px;text-align:right;"
	"color:var(--muted);user-select:none}\n"
	".context .sl.cur{background:#fff3c4;font-weight:600}\n"
	"li.frame.crash{background:var(--crashbg);box-shadow:inset 4px 0 var(--crash)}\n"
	"li.frame.crash .fn{color:var(--crash)}\n"
	"li.frame.async{background:var(--asyncbg)}\n"
	"li.frame.async .fn{color:var(--async)}\n"
	"li.frame.tailcall .fn,li.frame.inlined .fn{font-style:italic}\n"
	"li.frame.handler{opacity:.55}\n"
	"li.frame.trampoline{opacity:.55;font-style:italic;color:var(--muted)}\n"
	"li.recursion{background:var(--seambg);font:13px/1.6 ui-monospace,monospace;padding:2px 8px}\n"
	"li.seam{background:var(--seambg);color:var(--seam);font:600 11px/1.6 system-ui,sans-serif;"
	"letter-spacing:.06em;text-transform:uppercase;text-align:center}\n"
	".badge{display:inline-block;font:500 11px/1.5 system-ui,sans-serif;padding:0 6px;border-radius:9px;"
	"background:#eceff1;color:#455a64;margin-left:6px;vertical-align:1px}\n"
	".badge.async{background:#ead7f2;color:var(--async)}\n"
	"li.frame.script,li.frame.label{background:#edf7ee}\n"
	"li.frame.script .fn{color:#1b5e20}\n"
	".badge.runtime{background:#d3eed8;color:#1b5e20}\n"
	".badge.crash{background:var(--crash);color:#fff}\n"
	".badge.hang{background:#fff3e0;color:#e65100;margin-left:0}\n"
	"details{background:var(--card);border:1px solid var(--line);border-radius:8px;margin:8px 0}\n"
	"details>summary{cursor:pointer;padding:8px 12px;font-family:var(--mono);font-size:13px;"
	"overflow-wrap:anywhere}\n"
	"details>summary .muted{color:var(--muted)}\n"
	"details>ol.frames,details>.scroll{border:0;border-top:1px solid var(--line);border-radius:0}\n"
	"details.locals{margin:4px 0 0 2.8em}\n"
	"details.locals>summary{padding:2px 8px}\n"
	"table.locals td{padding:1px 8px;vertical-align:top;overflow-wrap:anywhere}\n"
	"table.locals td.t{color:var(--muted)}\n"
	"table.locals td.v{color:#0d47a1}\n"
	".tools{margin:0 0 6px}\n"
	"button{font:13px system-ui,sans-serif;padding:3px 10px;border:1px solid var(--line);"
	"border-radius:5px;background:var(--card);cursor:pointer}\n"
	".scroll{overflow-x:auto;background:var(--card);border:1px solid var(--line);border-radius:8px}\n"
	"table{border-collapse:collapse;width:100%;font-size:13px}\n"
	"th,td{text-align:left;padding:4px 10px;border-bottom:1px solid var(--line);vertical-align:top}\n"
	"th{color:var(--muted);font-weight:600;background:#fafbfc;white-space:nowrap}\n"
	"td.mono{font-family:var(--mono);font-size:12.5px;overflow-wrap:anywhere}\n"
	"td.msg{font-family:var(--mono);font-size:12.5px;white-space:pre-wrap;overflow-wrap:anywhere;min-width:16em}\n"
	"tr.inflight td{color:#b45309}\n"
	"tr.hl td{background:#fff59d}\n"
	"td.num,th.num{text-align:right;white-space:nowrap}\n"
	".none{color:var(--muted)}\n"
	"ul.warnings{list-style:none;margin:0;padding:0}\n"
	"ul.warnings li{background:var(--warnbg);color:var(--warn);border-left:4px solid #d4a600;"
	"padding:6px 10px;margin:4px 0;border-radius:4px;font-family:var(--mono);font-size:12.5px;"
	"overflow-wrap:anywhere}\n"
	".chart{background:var(--card);border:1px solid var(--line);border-radius:8px;padding:6px;"
	"overflow-x:auto}\n"
	".chart svg{display:block;width:100%;min-width:620px;height:auto}\n"
	"svg text{font:12px system-ui,sans-serif;fill:#455a64}\n"
	".graph svg{min-width:0;max-width:560px}\n"
	".graph .node circle{fill:#e3f2fd;stroke:#1565c0;stroke-width:2}\n"
	".graph .node.cycle circle{fill:#ffebee;stroke:var(--crash)}\n"
	".graph .edge{stroke:#607d8b;stroke-width:1.5;fill:none}\n"
	".graph .edge.cycle{stroke:var(--crash);stroke-width:2.5}\n"
	".graph marker path{fill:#607d8b}\n"
	"svg .lane{fill:#f3f5f8}\n"
	"svg .ev{fill:#1565c0;cursor:pointer}\n"
	"svg .ev:hover{fill:#0d47a1;stroke:#0d47a1;stroke-width:3}\n"
	"svg .ev.inflight{fill:#fff;stroke:#ef6c00;stroke-width:2}\n"
	"svg .crashline{stroke:var(--crash);stroke-width:2.5}\n"
	"svg text.crashlabel{fill:var(--crash);font-weight:700}\n"
	"svg .bar{fill:#1976d2}\n"
	".chart.days svg{min-width:0}\n"
	".chart .caption{font-size:12px;color:var(--muted);padding:0 4px}\n"
	"svg .axis{stroke:#b0b7c3;stroke-width:1}\n"
	"footer{margin-top:28px;color:var(--muted);font-size:12px}\n"
	"article.bucket{background:var(--card);border:1px solid var(--line);border-radius:8px;"
	"padding:12px 16px;margin:14px 0}\n"
	"article.bucket h2{border:0;margin:0;padding:0;display:flex;gap:12px;align-items:baseline}\n"
	"article.bucket .count{font-size:1.6em;color:var(--crash);min-width:2ch}\n"
	"article.bucket .signature{font-family:var(--mono);font-size:.9em;overflow-wrap:anywhere}\n"
	".cols{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1fr);gap:14px;margin-top:10px}\n"
	"table.buckets{table-layout:fixed;min-width:980px}\n"
	"table.buckets col.c-count{width:64px}table.buckets col.c-trend{width:110px}"
	"table.buckets col.c-cause{width:27%}table.buckets col.c-where{width:13%}"
	"table.buckets col.c-seen{width:136px}\n"
	"table.buckets th{padding:5px 8px}table.buckets th a{color:inherit}\n"
	"table.buckets th a.on{color:var(--link);font-weight:700}\n"
	"table.buckets td{padding:3px 8px;line-height:18px;vertical-align:middle;white-space:nowrap;"
	"overflow:hidden;text-overflow:ellipsis}\n"
	"table.buckets tbody tr:hover td{background:#f1f5fb}\n"
	"table.buckets .count{font-weight:700;color:var(--crash)}\n"
	"table.buckets .cause{font-size:inherit;margin:0}table.buckets td.cause{font-weight:normal}\n"
	"table.buckets td.cause b{color:var(--crash);font-weight:600}\n"
	"table.buckets td.sig{font-family:var(--mono);font-size:12.5px}\n"
	"table.buckets td.sig a{text-decoration:none}table.buckets td.sig a:hover{text-decoration:underline}\n"
	"table.buckets td.where,table.buckets td.seen{color:var(--muted);font-size:12.5px}\n"
	"table.buckets td.trend{padding:2px 8px}svg.spark{display:block}svg .spark{fill:#1976d2}\n"
	"h2.details{margin-top:28px}\n"
	"@media (max-width:700px){main{padding:10px}body{font-size:14px}h1{font-size:1.2em}"
	"ol.frames>li{font-size:12px;padding:6px 8px}li.frame .loc{padding-left:0}"
	"dl.facts{grid-template-columns:1fr;gap:0}dl.facts dt{margin-top:6px}"
	".cols{grid-template-columns:1fr}article.bucket{padding:10px}"
	"table.buckets{min-width:0;table-layout:auto}table.buckets colgroup{display:none}"
	"table.buckets .trend,table.buckets .where,table.buckets .seen:nth-last-child(2){display:none}"
	"table.buckets td{white-space:normal;overflow-wrap:break-word}table.buckets .cause{display:none}"
	".context{margin-left:0}}\n";

/* Buttons that open or close every thread, and a click on a timeline event
 * that shows its row in the event table. */
static const char script[] =
	"document.addEventListener('DOMContentLoaded',function(){\n"
	"document.querySelectorAll('button[data-details]').forEach(function(b){\n"
	" b.addEventListener('click',function(){var open=b.getAttribute('data-details')==='open';\n"
	"  document.querySelectorAll('details.'+b.getAttribute('data-class')).forEach(function(d){d.open=open;});});});\n"
	"document.querySelectorAll('svg .ev').forEach(function(c){\n"
	" c.addEventListener('click',function(){var r=document.getElementById('ev-'+c.getAttribute('data-order'));\n"
	"  if(!r)return;r.scrollIntoView({block:'center'});r.classList.add('hl');\n"
	"  setTimeout(function(){r.classList.remove('hl');},1500);});});\n"
	"});\n";

void rep_html_text(FILE *out, const char *s, size_t max)
{
	if (!s)
		return;
	size_t shown = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p; shown++) {
		if (max && shown == max) {
			fputs("\xe2\x80\xa6", out);
			return;
		}
		size_t n = rep_utf8_seq((const char *)p);
		switch (n ? *p : 0) {
		case '&': fputs("&amp;", out); break;
		case '<': fputs("&lt;", out); break;
		case '>': fputs("&gt;", out); break;
		case '"': fputs("&quot;", out); break;
		case '\'': fputs("&#39;", out); break;
		case '\t':
		case '\n': fputc(*p, out); break;
		default:   /* control characters, C1 and bidi controls as U+FFFD */
			if (n && *p >= 0x20 && *p != 0x7f && !rep_utf8_hidden((const char *)p, n))
				fwrite(p, 1, n, out);
			else
				fputs("\xef\xbf\xbd", out);
		}
		p += n ? n : 1;
	}
}

/* Text (escaped) inside an element: "<TAG>TEXT</TAG>" with TAG's opening
 * written as given ("span class=\"fn\""). */
static void element(FILE *out, const char *open, const char *text)
{
	const char *space = strchr(open, ' ');
	int name_len = space ? (int)(space - open) : (int)strlen(open);
	fprintf(out, "<%s>", open);
	rep_html_text(out, text, 0);
	fprintf(out, "</%.*s>", name_len, open);
}

/* Per thread: a server writes pages on several at once. */
static _Thread_local bool link_functions;

/* The source files of the page being written; NULL: no source lines. */
static _Thread_local struct rep_sources *html_sources;

void rep_html_link_functions(bool on)
{
	link_functions = on;
}

void rep_html_url_query(FILE *out, const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; p && *p; p++) {
		if ((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		    strchr("-._~", *p))
			fputc(*p, out);
		else
			fprintf(out, "%%%02X", *p);
	}
}

/* A frame's function name, linked to its search when pages link them. */
static void function_name(FILE *out, const char *shown, const char *function)
{
	if (link_functions && function) {
		fputs("<a class=\"fnlink\" href=\"/search?q=", out);
		rep_html_url_query(out, function);
		fputs("\">", out);
	}
	element(out, "span class=\"fn\"", shown);
	if (link_functions && function)
		fputs("</a>", out);
}

static void begin(FILE *out, const char *title, const char *main_tag)
{
	fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	      "<meta name=\"generator\" content=\"asyncore " AN_VERSION "\">\n", out);
	element(out, "title", title);
	fprintf(out, "\n<style>\n%s</style>\n<script>\n%s</script>\n</head>\n<body>\n%s\n",
		style_sheet, script, main_tag);
}

void rep_html_begin(FILE *out, const char *title)
{
	begin(out, title, "<main>");
}

void rep_html_begin_wide(FILE *out, const char *title)
{
	begin(out, title, "<main class=\"wide\">");
}

void rep_html_end(FILE *out)
{
	fputs("<footer>asyncore " AN_VERSION "</footer>\n</main>\n</body>\n</html>\n", out);
}

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;
	return slash ? slash + 1 : path;
}

void rep_html_path(FILE *out, const char *path)
{
	for (const char *p = path; p && *p;) {
		size_t n = strcspn(p, "/");
		char part[256];
		while (n) {   /* in pieces: the escaping takes NUL-terminated text */
			size_t k = n < sizeof(part) - 1 ? n : sizeof(part) - 1;
			memcpy(part, p, k);
			part[k] = '\0';
			rep_html_text(out, part, 0);
			p += k;
			n -= k;
		}
		if (*p == '/') {
			fputs("/<wbr>", out);
			p++;
		}
	}
}

static void write_args(FILE *out, const struct an_frame *f)
{
	if (!f->has_args)
		return;
	fputs("<span class=\"args\">(", out);
	for (size_t i = 0; i < f->nargs; i++) {
		const struct an_arg *a = &f->args[i];
		fputs(i ? ", <span class=\"arg\"" : "<span class=\"arg\"", out);
		if (a->type) {
			fputs(" title=\"", out);
			rep_html_text(out, a->type, 0);
			fputc('"', out);
		}
		fputc('>', out);
		rep_html_text(out, a->name, 0);
		fputc('=', out);
		if (a->entry_value && a->entry_equal) {   /* gdb's name=name@entry=V */
			rep_html_text(out, a->name, 0);
			fputs("@entry=", out);
		}
		fputs("<span class=\"v\">", out);
		rep_html_text(out, a->value, 0);
		fputs("</span>", out);
		if (a->entry_value && !a->entry_equal) {
			fputs(", ", out);
			rep_html_text(out, a->name, 0);
			fputs("@entry=<span class=\"v\">", out);
			rep_html_text(out, a->entry_value, 0);
			fputs("</span>", out);
		}
		fputs("</span>", out);
	}
	fputs(")</span>", out);
}

/* A frame a runtime description gave: the description's name as a badge,
 * its detail under it; no pc of its own. */
static void write_runtime_frame(FILE *out, const struct an_frame *f, size_t index)
{
	fprintf(out, "<li class=\"frame %s\"><span class=\"idx\">#%zu</span>", an_frame_kind_name(f->kind),
		index);
	function_name(out, f->function ? f->function : "??", f->function);
	element(out, "span class=\"badge runtime\"", f->runtime ? f->runtime : "runtime");
	if (f->kind == AN_FRAME_LABEL)
		fputs("<span class=\"badge\">label</span>", out);
	if (f->detail)
		element(out, "div class=\"loc\"", f->detail);
	fputs("</li>\n", out);
}

/* Lines around the frame's own (SOURCE_AROUND each side), that line
 * marked, when its file is readable. */
static void write_source(FILE *out, const struct an_frame *f)
{
	enum { SOURCE_AROUND = 2 };
	if (!f->file || !rep_source_line(html_sources, f->file, f->line))
		return;
	fputs("<div class=\"context\">", out);
	for (int n = f->line > SOURCE_AROUND ? f->line - SOURCE_AROUND : 1; n <= f->line + SOURCE_AROUND; n++) {
		const char *text = rep_source_line(html_sources, f->file, n);
		if (!text)
			break;
		fprintf(out, "<div class=\"sl%s\"><span class=\"ln\">%d</span><code>",
			n == f->line ? " cur" : "", n);
		rep_html_text(out, text, 0);
		fputs("</code></div>", out);
	}
	fputs("</div>", out);
}

/* The frame's local variables (--locals), folded: name, type, value. */
static void write_locals(FILE *out, const struct an_frame *f)
{
	if (!f->has_locals || !f->nlocals)
		return;
	fprintf(out, "<details class=\"locals\"><summary>locals (%zu)</summary>"
		"<table class=\"locals\">", f->nlocals);
	for (size_t i = 0; i < f->nlocals; i++) {
		const struct an_arg *a = &f->locals[i];
		fputs("<tr><td class=\"n\">", out);
		rep_html_text(out, a->name, 0);
		fputs("</td><td class=\"t\">", out);
		if (a->type)
			rep_html_text(out, a->type, 0);
		fputs("</td><td class=\"v\">", out);
		rep_html_text(out, a->value, 0);
		fputs("</td></tr>", out);
	}
	fputs("</table></details>", out);
}

static void write_frame(FILE *out, const struct an_frame *f, size_t index, bool crash)
{
	char h[32];
	if (AN_FRAME_IS_RUNTIME(f)) {
		write_runtime_frame(out, f, index);
		return;
	}
	const char *name = f->display ? f->display : f->function;
	if (f->role == AN_FRAME_TRAMPOLINE) {
		/* gdb's words for it; the pc stays in the title */
		fprintf(out, "<li class=\"frame native trampoline\" title=\"%s\"><span class=\"idx\">#%zu"
			"</span>&lt;signal handler called&gt;</li>\n", base_hex(h, f->pc), index);
		return;
	}
	fprintf(out, "<li class=\"frame %s%s%s%s%s\"><span class=\"idx\">#%zu</span>",
		f->kind == AN_FRAME_ASYNC ? "async" : "native", crash ? " crash" : "",
		f->inlined ? " inlined" : "", f->tailcall ? " tailcall" : "",
		f->role == AN_FRAME_HANDLER ? " handler" : "", index);
	function_name(out, name ? name : "??", f->function);
	write_args(out, f);
	if (crash)
		fputs("<span class=\"badge crash\">crashed here</span>", out);
	if (f->role == AN_FRAME_HANDLER)
		fputs("<span class=\"badge handler\">crash handler</span>", out);
	if (f->kind == AN_FRAME_ASYNC)
		fputs("<span class=\"badge async\">async</span>", out);
	if (f->inlined)
		fputs("<span class=\"badge\">inlined</span>", out);
	if (f->tailcall)
		fputs("<span class=\"badge\">tail call</span>", out);
	fputs("<div class=\"loc\">", out);
	if (f->file) {
		fputs("<span class=\"src\">", out);
		rep_html_path(out, f->file);
		fprintf(out, ":%d</span> ", f->line);
	}
	if (f->module) {
		fputs("<span class=\"mod\" title=\"", out);
		rep_html_text(out, f->module, 0);
		fputs("\">[", out);
		rep_html_text(out, base_name(f->module), 0);
		if (!f->function && f->has_module_offset)
			fprintf(out, "+0x%" PRIx64, f->module_offset);
		fputs("]</span> ", out);
	}
	fprintf(out, "<span class=\"pc\">%s", base_hex(h, f->pc));
	if (f->has_offset && !f->inlined)
		fprintf(out, " (+0x%" PRIx64 ")", f->offset);
	fputs("</span></div>", out);
	write_source(out, f);
	write_locals(out, f);
	fputs("</li>\n", out);
}

/* The item that stands for a recursion's run: its frames, cycle and count. */
static void write_recursion(FILE *out, const struct an_recursion *r)
{
	fprintf(out, "<li class=\"recursion\"><span class=\"idx\">#%zu .. #%zu</span> ", r->first, r->last);
	for (size_t i = 0; i < r->ncycle; i++) {
		if (i)
			fputs(" &lt; ", out);
		element(out, "span class=\"fn\"", r->cycle[i]);
	}
	fprintf(out, " <span class=\"muted\">%" PRIu64 " times</span></li>\n", r->repeats);
}

/* THREAD (NULL for a chain or task): its frames past a recursion's run are
 * numbered by their true index, after the run's item. */
static void write_frames_of(FILE *out, const struct an_thread *thread, const struct an_frame *frames,
			    size_t n, bool crashing)
{
	const struct an_frame *prev = NULL;   /* seams only between native and async frames */
	const struct an_recursion *rec = thread ? thread->recursion : NULL;
	bool handled = false;
	for (size_t i = 0; i < n && !handled; i++)
		handled = frames[i].role == AN_FRAME_CRASH_SITE;
	fputs("<ol class=\"frames\">\n", out);
	for (size_t i = 0; i < n; i++) {
		const struct an_frame *f = &frames[i];
		if (rec && i == rec->first)
			write_recursion(out, rec);
		if (f->role == AN_FRAME_HANDLER && (i == 0 || frames[i - 1].role == AN_FRAME_PLAIN))
			fputs("<li class=\"seam\">crash handler</li>\n", out);
		if (!AN_FRAME_IS_RUNTIME(f)) {
			if (f->seam || (prev && f->kind != prev->kind))
				fprintf(out, "<li class=\"seam\">%s frames</li>\n",
					f->kind == AN_FRAME_ASYNC ? "async" : "native");
			prev = f;
		}
		bool crash = crashing && (handled ? f->role == AN_FRAME_CRASH_SITE : i == 0);
		write_frame(out, f, thread ? an_thread_frame_index(thread, i) : i, crash);
	}
	if (n == 0)
		fputs("<li class=\"none\">(no frames)</li>\n", out);
	fputs("</ol>\n", out);
}

void rep_html_frames(FILE *out, const struct an_frame *frames, size_t n, bool crashing)
{
	write_frames_of(out, NULL, frames, n, crashing);
}

/* The function the crash is named after: the first name of the signature
 * ("SIGSEGV: f < g"), else the crashing thread's first named frame. */
static void write_crash_site(FILE *out, const struct analysis *an)
{
	const char *sig = an->signature ? strstr(an->signature, ": ") : NULL;
	if (sig) {
		sig += 2;
		if (strncmp(sig, "recursion ", 10) == 0)
			sig += 10;
		size_t len = strcspn(sig, " <");
		if (len) {
			fputs(" in <code>", out);
			char name[512];
			snprintf(name, sizeof(name), "%.*s", (int)(len < sizeof(name) ? len : sizeof(name) - 1),
				 sig);
			rep_html_text(out, name, 0);
			fputs("</code>", out);
			return;
		}
	}
	for (size_t i = 0; i < an->nthreads; i++)
		for (size_t k = 0; an->threads[i].crashing && k < an->threads[i].nframes; k++)
			if (an->threads[i].frames[k].function) {
				fputs(" in <code>", out);
				rep_html_text(out, an->threads[i].frames[k].function, 0);
				fputs("</code>", out);
				return;
			}
}

/* One "name: value" of the header; PATH values wrap at their slashes. */
static void fact(FILE *out, const char *name, const char *value, bool path)
{
	if (!value)
		return;
	fprintf(out, "<dt>%s</dt><dd>", name);
	if (path)
		rep_html_path(out, value);
	else
		rep_html_text(out, value, 0);
	fputs("</dd>\n", out);
}

/* One annotation of the program's own as a fact: its name, its value. */
static void annotation_fact(FILE *out, const struct an_annotation *a)
{
	fputs("<dt class=\"annotation\">", out);
	rep_html_text(out, a->name, 0);
	fputs("</dt><dd>", out);
	rep_html_text(out, a->value, 0);
	fputs("</dd>\n", out);
}

/* Under the title: "SEGV_MAPERR, fault address 0x10 · thread 7 · pid 7". */
static void write_subtitle(FILE *out, const struct analysis *an)
{
	char detail[128];
	fputs("<p class=\"sub\">", out);
	if (an->has_signal) {
		fprintf(out, "signal %d%s &middot; thread %d &middot; ", an->signo,
			rep_signal_detail(an, detail, sizeof(detail)), an->crashing_tid);
	}
	rep_html_text(out, an->executable ? base_name(an->executable) : "(unknown executable)", 0);
	if (an->has_pid)
		fprintf(out, ", pid %d", an->pid);
	fputs("</p>\n", out);
}

static void write_nav(FILE *out, const struct analysis *an)
{
	fputs("<nav><a href=\"#crashing\">crashing thread</a>", out);
	if (an->ntimeline)
		fputs("<a href=\"#timeline\">recorder timeline</a>", out);
	fputs("<a href=\"#threads\">other threads</a>", out);
	if (an->nsuspended)
		fputs("<a href=\"#suspended\">suspended coroutines</a>", out);
	if (rep_tasks_count(an, "go") < an->ntasks)
		fprintf(out, "<a href=\"#tasks\">%s</a>",
			strcmp(rep_tasks_other_runtime(an), "asyncio") == 0 ? "asyncio tasks" : "bthreads");
	if (rep_tasks_count(an, "go"))
		fputs("<a href=\"#goroutines\">goroutines</a>", out);
	fputs("<a href=\"#modules\">modules</a>", out);
	if (an->nwarnings)
		fprintf(out, "<a href=\"#warnings\">warnings (%zu)</a>", an->nwarnings);
	fputs("</nav>\n", out);
}

static void write_header(FILE *out, const struct analysis *an)
{
	char buf[128];
	fprintf(out, "<header class=\"top%s\">\n", an->has_signal ? "" : " quiet");
	if (an->cause.summary) {
		fprintf(out, "<p class=\"cause\" id=\"cause\" data-kind=\"%s\"><b>%s:</b> ",
			an_cause_kind_name(an->cause.kind), an_cause_kind_name(an->cause.kind));
		rep_html_text(out, an->cause.summary, 0);
		fputs("</p>\n", out);
	}
	fputs("<h1>", out);
	if (an->has_signal) {
		element(out, "span class=\"sig\"", an->signal_name ? an->signal_name : "signal");
		write_crash_site(out, an);
	} else {
		fputs(an->live ? "Running process, read live" : "Process dumped while running", out);
	}
	fputs("</h1>\n", out);
	write_subtitle(out, an);
	fputs("<dl class=\"facts\">\n", out);
	fact(out, "executable", an->executable, true);
	fact(out, "build-id", an->build_id, false);
	if (an->live) {
		snprintf(buf, sizeof(buf), "%d, stopped for %" PRIu64 ".%03" PRIu64 " ms", an->pid,
			 an->paused_us / 1000, an->paused_us % 1000);
		fact(out, "process", buf, false);
		fact(out, "taken at", an->taken_at, false);
	} else {
		fact(out, "core", an->core_path, true);
		snprintf(buf, sizeof(buf), "%" PRIu64 " bytes", an->core_size);
		fact(out, "core size", buf, false);
	}
	fact(out, "crashed at", an->crashed_at, false);
	for (size_t i = 0; i < an->nannotations; i++)
		annotation_fact(out, &an->annotations[i]);
	fact(out, "signature", an->signature, false);
	fact(out, "signature hash", an->signature_hash, false);
	fputs("</dl>\n", out);
	if (an->abort_message) {
		fputs("<p class=\"abort\" id=\"abort-message\"><b>Abort message:</b> ", out);
		rep_html_text(out, an->abort_message, 0);
		fputs("</p>\n", out);
	}
	write_nav(out, an);
	fputs("</header>\n", out);
}

/* "Thread 4211 (transfer): waits for ..." in a list of the hang. */
static void write_thread_wait(FILE *out, const struct analysis *an, int32_t tid)
{
	const struct an_thread *t = rep_thread_by_tid(an, tid);
	const char *who = t ? rep_thread_label(t) : NULL;
	fprintf(out, "<li>thread %d", (int)tid);
	if (who) {
		fputs(" (", out);
		rep_html_text(out, who, 120);
		fputs(")", out);
	}
	fputs(": ", out);
	rep_html_text(out, t && t->blocked ? t->blocked->summary : "?", 0);
	fputs("</li>\n", out);
}

/* The hang first: each deadlock's cycle, then the blocked threads
 * grouped by what they wait for. */
static void write_hang(FILE *out, const struct analysis *an)
{
	bool hang = an->cause.kind == AN_CAUSE_HANG || an->cause.kind == AN_CAUSE_DEADLOCK;
	struct rep_wait_group *groups = NULL;
	struct rep_task_wait_group *tasks = NULL;
	size_t n = hang ? rep_wait_groups(an, &groups) : 0;
	size_t nt = hang ? rep_task_wait_groups(an, REP_TASK_WAIT_GROUPS, &tasks) : 0;
	if (!an->ndeadlocks && !n && !nt) {
		free(groups);
		free(tasks);
		return;
	}
	fputs("<section id=\"hang\">\n", out);
	for (size_t i = 0; i < an->ndeadlocks; i++) {
		const struct an_deadlock *d = &an->deadlocks[i];
		fputs("<h2>Deadlock</h2>\n<p class=\"cause\">", out);
		rep_html_text(out, d->summary, 0);
		fputs("</p>\n<ul class=\"cycle\">\n", out);
		for (size_t k = 0; k < d->n; k++)
			write_thread_wait(out, an, d->threads[k]);
		fputs("</ul>\n", out);
	}
	rep_html_wait_graph(out, an);
	if (n || nt)
		fputs("<h2>Waiting</h2>\n<ul class=\"waiters\">\n", out);
	for (size_t i = 0; i < n; i++) {
		fprintf(out, "<li>%zu thread%s: ", groups[i].count, groups[i].count == 1 ? "" : "s");
		rep_html_text(out, groups[i].summary, 0);
		fputs("</li>\n", out);
	}
	for (size_t i = 0; i < nt; i++) {
		fprintf(out, "<li>%zu %s%s: ", tasks[i].count, tasks[i].noun, tasks[i].count == 1 ? "" : "s");
		rep_html_text(out, tasks[i].summary, 0);
		if (tasks[i].created_by) {
			fputs(", created by ", out);
			rep_html_text(out, tasks[i].created_by, 0);
		}
		fputs("</li>\n", out);
	}
	if (n || nt)
		fputs("</ul>\n", out);
	fputs("</section>\n", out);
	free(groups);
	free(tasks);
}

static void write_registers(FILE *out, const struct an_thread *t, const char *arch)
{
	char h[32];
	fputs("<details class=\"regs\"><summary>registers</summary><div class=\"scroll\"><table><tr>", out);
	for (unsigned r = 0; r < t->nregs; r++) {
		fprintf(out, "<td class=\"mono\">%s %s</td>", an_thread_reg_name(arch, r), base_hex(h, t->regs[r]));
		if (r % 4 == 3 && r + 1 < t->nregs)
			fputs("</tr><tr>", out);
	}
	fputs("</tr></table></div></details>\n", out);
}

/* A thread header's ": <span class="wait">waits for ...</span>, for 12 s"
 * of the group thread FIRST leads (LEAD NULL: that thread), or nothing. */
static void write_header_wait(FILE *out, const struct analysis *an, const size_t *lead, size_t first)
{
	const struct an_blocked *b = an->threads[first].blocked;
	char since[48];
	if (!b || !b->summary)
		return;
	fputs(": <span class=\"wait\">", out);
	rep_html_text(out, b->summary, 0);
	fputs("</span>", out);
	rep_html_text(out, rep_group_since(an, lead, first, since, sizeof(since)), 0);
}

static void write_crashing_thread(FILE *out, const struct analysis *an)
{
	fputs("<section id=\"crashing\">\n", out);
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		if (!t->crashing)
			continue;
		fprintf(out, "<h2>Thread %d <span class=\"n\">(crashing, ", t->tid);
		rep_html_text(out, an->signal_name ? an->signal_name : "signal", 0);
		fprintf(out, "%s", t->async_root ? ", async stack" : "");
		/* a goroutine's frames are already the thread's */
		const struct an_task *go = rep_goroutine_on(an, t->tid);
		const struct an_task *task = go ? NULL : rep_task_running_on(an, t->tid);
		char h[32];
		if (go)
			fprintf(out, ", running <a href=\"#goroutine-%" PRIu64 "\">goroutine %" PRIu64 "</a>%s",
				go->id, go->id, go->state == AN_TASK_SYSCALL ? " in syscall" : "");
		if (task)
			fprintf(out, ", running bthread %s", base_hex(h, task->id));
		fputs(")</span>", out);
		write_header_wait(out, an, NULL, i);
		fputs("</h2>\n", out);
		if (task) {
			/* The top of its stack is the bthread's, the worker's under it. */
			rep_html_frames(out, task->frames, task->nframes, true);
			fputs("<p class=\"none\">worker frames (bthread scheduler):</p>\n", out);
		}
		write_frames_of(out, t, t->frames, t->nframes, !task);
		if (t->unwind_error) {
			fputs("<p class=\"none\">unwinding stopped: ", out);
			rep_html_text(out, t->unwind_error, 0);
			fputs("</p>\n", out);
		}
		write_registers(out, t, an->arch);
	}
	if (!an->has_signal)
		fputs("<p class=\"none\">No thread took a signal: every thread is listed below.</p>\n", out);
	fputs("</section>\n", out);
}

enum { GROUP_TIDS_MAX = 64 };

/* "4 threads: 812, 813, 814, 815": the group thread FIRST leads. */
static void write_group_head(FILE *out, const struct analysis *an, const size_t *lead, size_t first, size_t n)
{
	size_t shown = 0;
	fprintf(out, "%zu threads: ", n);
	for (size_t i = first; i < an->nthreads && shown < GROUP_TIDS_MAX; i++)
		if (lead[i] == first)
			fprintf(out, "%s%d", shown++ ? ", " : "", (int)an->threads[i].tid);
	if (n > shown)
		fprintf(out, ", ... (%zu more)", n - shown);
}

/* The summary line of a collapsed thread, or of the N threads (N > 1) with
 * its stack that it leads: its innermost named frame. */
static void write_thread_summary(FILE *out, const struct analysis *an, const size_t *lead, size_t first,
				 size_t n)
{
	const struct an_thread *t = &an->threads[first];
	const struct an_task *go = rep_goroutine_on(an, t->tid);
	fputs("<summary>", out);
	if (n > 1)
		write_group_head(out, an, lead, first, n);
	else
		fprintf(out, "Thread %d", t->tid);
	const char *who = n > 1 ? rep_group_label(an, lead, first) : rep_thread_label(t);
	if (who) {
		fputs(" (", out);
		rep_html_text(out, who, 120);
		fputs(")", out);
	}
	write_header_wait(out, an, n > 1 ? lead : NULL, first);
	if (t->async_root)
		fputs(" <span class=\"badge async\">async stack</span>", out);
	if (go)
		fprintf(out, " <span class=\"muted\">running goroutine %" PRIu64 "%s</span>", go->id,
			go->state == AN_TASK_SYSCALL ? " in syscall" : "");
	for (size_t k = 0; k < t->nframes; k++) {
		const char *name = t->frames[k].display ? t->frames[k].display : t->frames[k].function;
		if (name) {
			fputs(" <span class=\"muted\">in</span> ", out);
			rep_html_text(out, name, 120);
			break;
		}
	}
	/* A recursion's run counts: the stack's frames, not the ones shown. */
	fprintf(out, " <span class=\"muted\">(%zu frames)</span></summary>\n",
		t->nframes ? an_thread_frame_index(t, t->nframes - 1) + 1 : 0);
}

static void write_other_threads(FILE *out, const struct analysis *an, bool all_threads, bool each)
{
	size_t n = 0;
	for (size_t i = 0; i < an->nthreads; i++)
		n += !an->threads[i].crashing;
	fprintf(out, "<section id=\"threads\">\n<h2>Other threads <span class=\"n\">(%zu)</span></h2>\n", n);
	if (!all_threads && an->has_signal) {
		fputs("<p class=\"none\">Not shown (--threads crashing).</p>\n</section>\n", out);
		return;
	}
	if (n > 1)
		fputs("<p class=\"tools\"><button data-details=\"open\" data-class=\"thread\">expand all</button> "
		      "<button data-details=\"close\" data-class=\"thread\">collapse all</button></p>\n", out);
	size_t *lead = each ? NULL : rep_stack_groups(an);
	for (size_t i = 0; i < an->nthreads; i++) {
		const struct an_thread *t = &an->threads[i];
		if (t->crashing || (lead && lead[i] != i))
			continue;
		size_t count = rep_group_size(an, lead, i);
		fprintf(out, "<details class=\"thread%s\">", count > 1 ? " group" : "");
		write_thread_summary(out, an, lead, i, count);
		write_frames_of(out, t, t->frames, t->nframes, false);
		fputs("</details>\n", out);
	}
	free(lead);
	if (n == 0)
		fputs("<p class=\"none\">The process had one thread.</p>\n", out);
	fputs("</section>\n", out);
}

static void write_suspended(FILE *out, const struct analysis *an)
{
	if (an->nsuspended == 0)
		return;
	char h[32];
	fprintf(out, "<section id=\"suspended\">\n<h2>Suspended coroutines <span class=\"n\">(%zu chains)"
		"</span></h2>\n", an->nsuspended);
	for (size_t i = 0; i < an->nsuspended; i++) {
		const struct an_suspended *s = &an->suspended[i];
		fprintf(out, "<details class=\"chain\"%s><summary>chain at %s", i == 0 ? " open" : "",
			base_hex(h, s->leaf));
		if (s->nframes && (s->frames[0].display || s->frames[0].function)) {
			fputs(" <span class=\"muted\">in</span> ", out);
			rep_html_text(out, s->frames[0].display ? s->frames[0].display : s->frames[0].function,
				      120);
		}
		fprintf(out, " <span class=\"muted\">(%zu frames)</span></summary>\n", s->nframes);
		rep_html_frames(out, s->frames, s->nframes, false);
		fputs("</details>\n", out);
	}
	fputs("</section>\n", out);
}

/* One group of bthreads (reports/taskgroups.h) as a <details class="task">:
 * the one, or how many with their ids, what they do, their entry function,
 * and their frames once. */
static void write_task_group(FILE *out, const struct analysis *an, const struct rep_task_group *g)
{
	enum { MAX_IDS = 64 };
	const struct an_task *t = &an->tasks[g->members[0]];
	char h[32], doing[160];
	bool crashing = t->state == AN_TASK_RUNNING && an->has_signal && t->tid == an->crashing_tid;
	fprintf(out, "<details class=\"task\"%s><summary>", crashing ? " open" : "");
	const char *noun = rep_task_noun(t);
	if (g->n == 1)
		fprintf(out, "%s %s", noun, base_hex(h, t->id));
	else
		fprintf(out, "%zu %ss", g->n, noun);
	if (g->n == 1 && t->name) {
		fputs(" (", out);
		rep_html_text(out, t->name, 120);
		fputc(')', out);
	}
	fprintf(out, " <span class=\"muted\">%s</span> ", rep_task_doing(t, an, doing, sizeof(doing)));
	rep_html_text(out, t->fn ? t->fn : "??", 120);
	fprintf(out, " <span class=\"muted\">(%zu frames)</span></summary>\n", t->nframes);
	if (g->n > 1) {
		fputs("<p class=\"none\">ids:", out);
		for (size_t i = 0; i < g->n && i < MAX_IDS; i++)
			fprintf(out, " %s", base_hex(h, an->tasks[g->members[i]].id));
		if (g->n > MAX_IDS)
			fprintf(out, " ... and %zu more", g->n - MAX_IDS);
		fputs("</p>\n", out);
	}
	rep_html_frames(out, t->frames, t->nframes, crashing);
	if (g->n > 1 && !rep_task_group_same_args(an, g))
		fprintf(out, "<p class=\"none\">the arguments shown are %s %s's: the others' differ</p>\n",
			noun, base_hex(h, t->id));
	if (t->unwind_error) {
		fputs("<p class=\"none\">", out);
		rep_html_text(out, t->unwind_error, 0);
		fputs("</p>\n", out);
	}
	fputs("</details>\n", out);
}

/* "created by F at FILE:LINE" under a goroutine's frames. */
static void write_go_created(FILE *out, const struct an_task *t)
{
	if (!t->created_by)
		return;
	fputs("<p class=\"none\">created by <span class=\"mono\">", out);
	rep_html_text(out, t->created_by, 0);
	fputs("</span>", out);
	if (t->created_file) {
		fputs(" at <span class=\"mono\">", out);
		rep_html_path(out, t->created_file);
		fprintf(out, ":%d</span>", t->created_line);
	}
	fputs("</p>\n", out);
}

/* The ids of a group of goroutines, each an anchor the thread headers link to. */
static void write_go_ids(FILE *out, const struct analysis *an, const struct rep_task_group *g)
{
	enum { MAX_IDS = 64 };
	fputs("<p class=\"none\">ids:", out);
	for (size_t i = 0; i < g->n && i < MAX_IDS; i++)
		fprintf(out, " <span id=\"goroutine-%" PRIu64 "\">%" PRIu64 "</span>",
			an->tasks[g->members[i]].id, an->tasks[g->members[i]].id);
	if (g->n > MAX_IDS)
		fprintf(out, " ... and %zu more", g->n - MAX_IDS);
	fputs("</p>\n", out);
}

/* One group of goroutines as a <details class="goroutine">: "goroutine 19
 * [chan receive]" (or "3 goroutines [...]" and their ids), the start
 * function, the frames once and "created by"; the crashing one open. */
static void write_go_group(FILE *out, const struct analysis *an, const struct rep_task_group *g)
{
	const struct an_task *t = &an->tasks[g->members[0]];
	char status[160];
	bool crashing = t->has_tid && an->has_signal && t->tid == an->crashing_tid;
	fprintf(out, "<details class=\"goroutine\"%s", crashing ? " open" : "");
	if (g->n == 1)
		fprintf(out, " id=\"goroutine-%" PRIu64 "\"><summary>goroutine %" PRIu64, t->id, t->id);
	else
		fprintf(out, "><summary>%zu goroutines", g->n);
	fputs(" <span class=\"muted\">[", out);
	rep_html_text(out, rep_go_status(an, g, status, sizeof(status)), 0);
	fputs("]</span> ", out);
	rep_html_text(out, t->fn ? t->fn : "??", 120);
	if (t->has_tid)
		fprintf(out, " <span class=\"muted\">on thread %" PRId32 "%s</span>", t->tid,
			crashing ? " (crashing)" : "");
	fprintf(out, " <span class=\"muted\">(%zu frames)</span></summary>\n", t->nframes);
	if (g->n > 1)
		write_go_ids(out, an, g);
	rep_html_frames(out, t->frames, t->nframes, crashing);
	write_go_created(out, t);
	if (g->n > 1 && !rep_task_group_same_args(an, g))
		fprintf(out, "<p class=\"none\">the arguments shown are goroutine %" PRIu64 "'s: the "
			"others' differ</p>\n", t->id);
	if (t->unwind_error) {
		fputs("<p class=\"none\">", out);
		rep_html_text(out, t->unwind_error, 0);
		fputs("</p>\n", out);
	}
	fputs("</details>\n", out);
}

/* The groups of G whose tasks are goroutines (GO) or not. */
static void write_groups(FILE *out, const struct analysis *an, const struct rep_task_groups *g, bool go)
{
	for (size_t i = 0; i < g->n; i++) {
		if (rep_task_is_go(&an->tasks[g->v[i].members[0]]) != go)
			continue;
		if (go)
			write_go_group(out, an, &g->v[i]);
		else
			write_task_group(out, an, &g->v[i]);
	}
}

/* Tasks of user-space runtimes (DESIGN.md "Tasks": bRPC bthreads,
 * goroutines), a section per runtime, those that share a state, a wait and
 * a stack once. */
static void write_tasks(FILE *out, const struct analysis *an)
{
	char counts[160];
	size_t ngo = rep_tasks_count(an, "go");
	if (an->ntasks == 0)
		return;
	struct rep_task_groups groups;
	bool grouped = rep_task_groups_init(&groups, an);
	for (int go = 0; go < 2; go++) {
		if (go ? !ngo : ngo == an->ntasks)
			continue;
		if (go)
			fprintf(out, "<section id=\"goroutines\">\n<h2>Goroutines <span class=\"n\">(%s)"
				"</span></h2>\n", rep_tasks_counts_of(an, "go", counts, sizeof(counts)));
		else if (strcmp(rep_tasks_other_runtime(an), "asyncio") == 0)
			fprintf(out, "<section id=\"tasks\">\n<h2>Asyncio tasks <span class=\"n\">(%s)</span>"
				"</h2>\n", rep_tasks_counts_of(an, "asyncio", counts, sizeof(counts)));
		else
			fprintf(out, "<section id=\"tasks\">\n<h2>Bthreads <span class=\"n\">(%s)</span></h2>\n",
				rep_tasks_counts_of(an, ngo ? "bthread" : NULL, counts, sizeof(counts)));
		if (!grouped)
			fputs("<p class=\"none\">(out of memory grouping them)</p>\n", out);
		if (go && groups.n > 1)
			fputs("<p class=\"tools\"><button data-details=\"open\" data-class=\"goroutine\">"
			      "expand all</button> <button data-details=\"close\" data-class=\"goroutine\">"
			      "collapse all</button></p>\n", out);
		write_groups(out, an, &groups, go);
		fputs("</section>\n", out);
	}
	rep_task_groups_deinit(&groups);
}

/* Horizontal position of timeline entry I in [X0, X1]: by timestamp when
 * the shown entries span any time, else by order of arrival. */
static double event_x(const struct analysis *an, size_t first, size_t i, double x0, double x1)
{
	uint64_t t0 = an->timeline[first].timestamp, t1 = an->timeline[an->ntimeline - 1].timestamp;
	size_t n = an->ntimeline - first;
	if (t1 > t0)
		return x0 + (x1 - x0) * (double)(an->timeline[i].timestamp - t0) / (double)(t1 - t0);
	return n > 1 ? x0 + (x1 - x0) * (double)(i - first) / (double)(n - 1) : (x0 + x1) / 2;
}

static void write_seconds(FILE *out, uint64_t us)
{
	fprintf(out, "%" PRIu64 ".%06" PRIu64, us / 1000000, us % 1000000);
}

/* The hover text of one event: "#ORDER  SECONDS s  RING: MESSAGE". */
static void write_event_title(FILE *out, const struct analysis *an, const struct an_timeline_entry *e)
{
	const struct an_recorder *r = &an->recorders[e->recorder];
	const struct an_event *ev = &r->events[e->event];
	fprintf(out, "<title>#%" PRIu64 "  ", e->order);
	write_seconds(out, e->timestamp);
	fputs(" s  ", out);
	rep_html_text(out, r->name ? r->name : "?", 0);
	fputs(": ", out);
	rep_html_text(out, ev->message, 0);
	fputs(ev->in_flight ? "  (in flight)</title>" : "</title>", out);
}

/* The chart: a lane per ring, each event a dot at its time, the crash a red
 * line after the last event; hovering a dot shows its message. */
static void write_timeline_chart(FILE *out, const struct analysis *an, size_t first)
{
	const double width = 1000, left = 150, right = 900, top = 26, lane = 30;
	double height = top + lane * (double)an->nrecorders + 28;
	fprintf(out, "<div class=\"chart\"><svg id=\"timeline-chart\" xmlns=\"http://www.w3.org/2000/svg\" "
		"viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"recorder timeline\">\n", width, height);
	for (size_t r = 0; r < an->nrecorders; r++) {
		double y = top + lane * (double)r;
		fprintf(out, "<rect class=\"lane\" x=\"%.0f\" y=\"%.0f\" width=\"%.0f\" height=\"%.0f\" rx=\"3\"/>",
			left - 6, y + 3, right - left + 12, lane - 6);
		fprintf(out, "<text x=\"8\" y=\"%.0f\">", y + lane / 2 + 4);
		rep_html_text(out, an->recorders[r].name ? an->recorders[r].name : "?", 18);
		fputs("<title>", out);
		rep_html_text(out, an->recorders[r].name, 0);
		fprintf(out, ": %zu events</title></text>\n", an->recorders[r].nevents);
	}
	for (size_t i = first; i < an->ntimeline; i++) {
		const struct an_timeline_entry *e = &an->timeline[i];
		bool in_flight = an->recorders[e->recorder].events[e->event].in_flight;
		fprintf(out, "<circle class=\"ev%s\" data-order=\"%" PRIu64 "\" cx=\"%.1f\" cy=\"%.0f\" r=\"5\">",
			in_flight ? " inflight" : "", e->order, event_x(an, first, i, left, right),
			top + lane * (double)e->recorder + lane / 2);
		write_event_title(out, an, e);
		fputs("</circle>\n", out);
	}
	double axis = top + lane * (double)an->nrecorders + 4, crash = right + 40;
	fprintf(out, "<line class=\"axis\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>\n", left, axis,
		crash, axis);
	fprintf(out, "<text x=\"%.0f\" y=\"%.0f\">", left, axis + 16);
	write_seconds(out, an->timeline[first].timestamp);
	fprintf(out, " s</text><text x=\"%.0f\" y=\"%.0f\" text-anchor=\"end\">", right, axis + 16);
	write_seconds(out, an->timeline[an->ntimeline - 1].timestamp);
	fputs(" s</text>\n", out);
	fprintf(out, "<line class=\"crashline\" x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\"/>"
		"<text class=\"crashlabel\" x=\"%.0f\" y=\"16\" text-anchor=\"middle\">crash",
		crash, top - 4, crash, axis, crash);
	if (an->has_signal) {
		fputs(" (", out);
		rep_html_text(out, an->signal_name ? an->signal_name : "signal", 0);
		fputs(")", out);
	}
	fputs("</text>\n</svg></div>\n", out);
}

static void write_timeline_table(FILE *out, const struct analysis *an)
{
	size_t first = an->ntimeline > TABLE_MAX_EVENTS ? an->ntimeline - TABLE_MAX_EVENTS : 0;
	fprintf(out, "<h3>Last %zu events before the %s</h3>\n<div class=\"scroll\"><table id=\"events\">"
		"<tr><th class=\"num\">order</th><th class=\"num\">time (s)</th><th>ring</th><th>location</th>"
		"<th>function</th><th>message</th></tr>\n", an->ntimeline - first, an->live ? "stop" : "crash");
	for (size_t i = first; i < an->ntimeline; i++) {
		const struct an_timeline_entry *e = &an->timeline[i];
		const struct an_recorder *r = &an->recorders[e->recorder];
		const struct an_event *ev = &r->events[e->event];
		fprintf(out, "<tr id=\"ev-%" PRIu64 "\"%s><td class=\"num mono\">%" PRIu64
			"</td><td class=\"num mono\">", e->order, ev->in_flight ? " class=\"inflight\"" : "",
			e->order);
		write_seconds(out, e->timestamp);
		fputs("</td>", out);
		element(out, "td", r->name);
		element(out, "td class=\"mono\"", ev->location);
		element(out, "td class=\"mono\"", ev->function);
		fputs("<td class=\"msg\">", out);
		rep_html_text(out, ev->message, 0);
		if (ev->in_flight)
			fputs(" <span class=\"badge\">in flight</span>", out);
		fputs("</td></tr>\n", out);
	}
	fputs("</table></div>\n", out);
}

static void write_timeline(FILE *out, const struct analysis *an)
{
	if (an->ntimeline == 0 || an->nrecorders == 0)
		return;
	size_t first = an->ntimeline > CHART_MAX_EVENTS ? an->ntimeline - CHART_MAX_EVENTS : 0;
	fprintf(out, "<section id=\"timeline\">\n<h2>Recorder timeline <span class=\"n\">(%zu events in "
		"%zu rings", an->ntimeline, an->nrecorders);
	if (first)
		fprintf(out, "; the last %d drawn", CHART_MAX_EVENTS);
	fputs(")</span></h2>\n", out);
	write_timeline_chart(out, an, first);
	write_timeline_table(out, an);
	fputs("</section>\n", out);
}

static void write_modules(FILE *out, const struct analysis *an)
{
	char a[32], b[32];
	fprintf(out, "<section id=\"modules\">\n<h2>Modules <span class=\"n\">(%zu)</span></h2>\n"
		"<div class=\"scroll\"><table><tr><th>path</th><th>range</th><th>build-id</th>"
		"<th>debug info</th></tr>\n", an->nmodules);
	for (size_t i = 0; i < an->nmodules; i++) {
		const struct an_module *m = &an->modules[i];
		fputs("<tr>", out);
		fputs("<td class=\"mono\">", out);
		rep_html_path(out, m->path ? m->path : "?");
		fputs("</td>", out);
		fprintf(out, "<td class=\"mono\">%s-%s</td>", base_hex(a, m->start), base_hex(b, m->end));
		element(out, "td class=\"mono\"", m->build_id);
		if (m->debuginfo) {
			fputs("<td class=\"mono\">", out);
			rep_html_path(out, m->debuginfo);
			fputs("</td>", out);
		} else
			fputs("<td class=\"none\">none</td>", out);
		fputs("</tr>\n", out);
	}
	fputs("</table></div>\n</section>\n", out);
}

static void write_warnings(FILE *out, const struct analysis *an)
{
	if (an->nwarnings == 0)
		return;
	fprintf(out, "<section id=\"warnings\">\n<h2>Warnings <span class=\"n\">(%zu)</span></h2>\n"
		"<ul class=\"warnings\">\n", an->nwarnings);
	for (size_t i = 0; i < an->nwarnings; i++) {
		element(out, "li", an->warnings[i]);
		fputc('\n', out);
	}
	fputs("</ul>\n</section>\n", out);
}

/* The page's title: "SIGNAL in EXECUTABLE (pid N)". */
static void page_title(char *buf, size_t size, const struct analysis *an)
{
	const char *exe = base_name(an->executable);
	snprintf(buf, size, "%s in %s",
		 an->has_signal && an->signal_name ? an->signal_name : an->live ? "hang" : "core",
		 exe ? exe : "unknown executable");
	if (an->has_pid)
		snprintf(buf + strlen(buf), size - strlen(buf), " (pid %d)", an->pid);
}

int rep_html_write(FILE *out, const struct analysis *an, const struct rep_html_options *opts)
{
	char title[512];
	html_sources = opts->source ? rep_sources_create() : NULL;
	page_title(title, sizeof(title), an);
	rep_html_begin(out, title);
	write_header(out, an);
	write_hang(out, an);
	write_crashing_thread(out, an);
	write_timeline(out, an);
	write_other_threads(out, an, opts->all_threads, opts->each_thread);
	write_suspended(out, an);
	write_tasks(out, an);
	write_modules(out, an);
	write_warnings(out, an);
	rep_html_end(out);
	rep_sources_destroy(html_sources);
	html_sources = NULL;
	return ferror(out) ? -1 : 0;
}
