/*
 * Helpers for showing call sites in findings (implementation in
 * analyzer/symbolize.c).  Strings written here come from the traced program
 * (function names, file paths): escape them for the output they go to.
 */
#ifndef SYNCSIGHT_CALLSITE_VIEW_H
#define SYNCSIGHT_CALLSITE_VIEW_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "symbolize.h"

/* Write the first user frame of a native stack (addresses innermost first, as
 * in SS_REC_STACK) into `site` as "file:line function", or, without line
 * info, "module+0xoffset function" / "module+0xoffset".  For a frame with
 * inlined calls the innermost inlined function is the one named (it holds the
 * line that made the call).  Returns the index in `addrs` of that frame, or
 * -1 when no frame is user code (then `site` is ""). */
int ss_site_format(ss_symbolizer *s, const uint64_t *addrs, uint32_t depth,
                   char *site, size_t sitelen);

/* One resolved frame in the same form as ss_site_format's `site`. */
void ss_frame_format(const ss_frame *f, char *out, size_t outlen);

/* Is a Python source file the user's (as opposed to the interpreter's
 * frozen/bootstrap modules or PyTorch's own Python)?  Python stacks are
 * SS_REC_PYSTACK frames (file, function, line; innermost first): the site of
 * a Python finding is the first frame for which this is true, printed as
 * "file:line function". */
static inline int ss_pyfile_is_user(const char *file)
{
    if (!file || !*file)
        return 0;
    if (file[0] == '<')                          /* <frozen importlib._bootstrap>, <string> */
        return 0;
    static const char *const not_user[] = {
        "/site-packages/torch/", "/dist-packages/torch/",
        "/site-packages/triton/", "/dist-packages/triton/",
    };
    for (size_t i = 0; i < sizeof not_user / sizeof not_user[0]; i++)
        if (strstr(file, not_user[i]))
            return 0;
    return 1;
}

#endif
