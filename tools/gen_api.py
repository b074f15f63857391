#!/usr/bin/env python3
"""Generate syncsight's CUDA runtime API recording code from preload/cuda_api.tab.

The table describes each interposed entry point once; everything that repeats
per entry point and per _ptsz/_ptds twin is produced here:

  <out>/ss_api_wrap.c      interposing wrappers for the base names
  <out>/ss_api_wrap_pt.c   wrappers for the _ptsz/_ptds twins, compiled with
                           CUDA_API_PER_THREAD_DEFAULT_STREAM so that
                           cuda_runtime_api.h declares (and checks) them
  <out>/ss_api_cupti.c     the CUPTI runtime-callback path (static cudart),
                           the CUPTI driver-callback path (rows with
                           domain=driver: Triton, CuPy, JAX) and the lists
                           of wanted callback ids
  <out>/ss_api_symbols.txt every exported wrapper name, one per line
  <out>/ss_api_classes.c   the analyzer's table: for every base name it
                           computes (ss_api_base_name), the ss_api_class and
                           what the call does to the host (analyzer/model.h)
  --doc FILE               docs/api-coverage.md

Standard library only (the build runs it with $(PYTHON)).
"""
import argparse
import os
import re
import sys

SLOT_KEYS = ("stream", "event", "ptr", "ptr2", "bytes", "func", "arg", "arg2")
MEM_CONSTANTS = {"DEVICE": "SS_MEM_DEVICE", "ARRAY": "SS_MEM_ARRAY",
                 "PINNED": "SS_MEM_PINNED", "MANAGED": "SS_MEM_MANAGED"}

# class -> (blameable C expression, NVTX category or None, description).
# Blame follows what the analyzer can hold a call responsible for: waits,
# blocking calls, copies, memsets, legacy-stream work, event record/wait,
# allocation and free.  NVTX ranges go around what blocks or synchronizes.
LEGACY = "ss_api_is_legacy_stream(rec.stream, rec.flags)"
CLASSES = {
    "stream-create":  ("0", None, "creates a stream; writes SS_REC_STREAM and names it in NVTX"),
    "stream-destroy": ("0", None, "destroys a stream (returns at once, the work drains later)"),
    "stream-sync":    ("1", "SS_NVTX_CAT_STREAM_SYNC", "waits for one stream"),
    "stream-query":   ("1", None, "polls a stream (cudaErrorNotReady = 600 is not a failure)"),
    "stream-wait":    ("1", None, "makes a stream wait for an event (a cross-stream fence)"),
    "host-func":      (LEGACY, None, "enqueues a host function"),
    "stream-wait-value": ("1", None, "makes a stream wait until a memory word satisfies a condition "
                                  "(cuStreamWaitValue32/64): a cross-stream fence when a write-value satisfies it"),
    "stream-write-value": ("1", None, "writes a memory word when its stream reaches it (cuStreamWriteValue32/64)"),
    "stream-batch-memop": ("1", None, "several stream memory operations at once (cuStreamBatchMemOp); its "
                                   "operations are not recorded"),
    "managed-memory": (LEGACY, None, "prefetches, discards or re-attaches managed memory in stream order: GPU work "
                                  "CUPTI records no activity for (its end is unknown)"),
    "capture":        ("0", None, "begins or ends stream capture"),
    "context-event":  ("1", None, "records in an event all the work of a context, or makes all future work of a "
                               "context wait for an event (cuCtxRecordEvent / cuCtxWaitEvent and the green "
                               "contexts' twins): orders the analyzer does not model, so it says \"possible\" after "
                               "them"),
    "event-create":   ("0", None, "creates an event"),
    "event-open":     ("0", None, "opens an event another process made (CUDA IPC): recorded there, never here"),
    "event-record":   ("1", None, "records an event on a stream"),
    "event-sync":     ("1", "SS_NVTX_CAT_EVENT_SYNC", "waits for an event"),
    "event-query":    ("1", None, "polls an event"),
    "event-elapsed":  ("0", None, "time between two events (cudaErrorNotReady until both completed)"),
    "event-destroy":  ("0", None, "destroys an event (returns at once)"),
    "copy-sync":      ("1", "SS_NVTX_CAT_MAY_BLOCK", "synchronous copy (implicit synchronization)"),
    "copy-async":     ("1", None, "asynchronous copy (synchronous in effect when host memory is pageable)"),
    "memset-sync":    ("1", "SS_NVTX_CAT_MAY_BLOCK", "synchronous memset (NVTX range only on host memory)"),
    "memset-async":   ("1", None, "asynchronous memset"),
    "alloc":          ("1", None, "allocates or registers memory"),
    "free":           ("1", "SS_NVTX_CAT_MAY_BLOCK", "frees or unregisters memory (synchronizes the device)"),
    "free-async":     ("1", None, "stream-ordered free"),
    "launch":         (LEGACY, None, "kernel launch; 8-byte kernel parameters go to the record's tail"),
    "graph-launch":   ("1", None, "graph launch (blocks until the graph ends when a memcpy node has a pageable "
                               "host end)"),
    "device-sync":    ("1", "SS_NVTX_CAT_DEVICE_SYNC", "waits for the whole device"),
    "set-device":     ("0", None, "sets the thread's device (tracked to fill ss_api_rec.device)"),
    "device-limit":   ("1", "SS_NVTX_CAT_MAY_BLOCK", "changes a device limit (waits for the device)"),
    "device-reset":   ("1", "SS_NVTX_CAT_DEVICE_SYNC", "destroys the primary context (waits for the device)"),
    "graph-node":     ("0", None, "adds a node to a graph or sets a node's parameters (nothing runs yet): what "
                               "the node will touch, a kernel node's 8-byte parameters in the record's tail (for a "
                               "stub the shim's cudart does not know, a static cudart's, read from the driver call "
                               "inside: cuGraphAddKernelNode, cuGraphAddNode or their SetParams)"),
}

# class -> the analyzer's ss_api_class (analyzer/model.h).  The analyzer is
# coarser: graph launches are launches, cudaSetDevice is "other", and the
# stream-ordered cudaFreeAsync is a free (it ends an allocation like cudaFree;
# ss_call.is_async and the host column tell the two apart).
ANALYZER_CLASS = {
    "stream-create": "SS_API_STREAM_CREATE", "stream-destroy": "SS_API_STREAM_DESTROY",
    "stream-sync": "SS_API_STREAM_SYNC", "stream-query": "SS_API_STREAM_QUERY",
    "stream-wait": "SS_API_STREAM_WAIT", "host-func": "SS_API_HOST_FUNC", "capture": "SS_API_CAPTURE",
    "stream-wait-value": "SS_API_STREAM_WAIT_VALUE", "stream-write-value": "SS_API_STREAM_WRITE_VALUE",
    "stream-batch-memop": "SS_API_STREAM_BATCH_MEMOP", "managed-memory": "SS_API_MANAGED_MEMORY",
    "context-event": "SS_API_CONTEXT_EVENT",
    "event-create": "SS_API_EVENT_CREATE", "event-open": "SS_API_EVENT_CREATE", "event-record": "SS_API_EVENT_RECORD",
    "event-sync": "SS_API_EVENT_SYNC", "event-query": "SS_API_EVENT_QUERY",
    "event-elapsed": "SS_API_EVENT_ELAPSED", "event-destroy": "SS_API_EVENT_DESTROY",
    "copy-sync": "SS_API_COPY_SYNC", "copy-async": "SS_API_COPY_ASYNC",
    "memset-sync": "SS_API_MEMSET_SYNC", "memset-async": "SS_API_MEMSET_ASYNC",
    "alloc": "SS_API_ALLOC", "free": "SS_API_FREE", "free-async": "SS_API_FREE",
    "launch": "SS_API_LAUNCH", "graph-launch": "SS_API_LAUNCH",
    "device-sync": "SS_API_DEVICE_SYNC", "set-device": "SS_API_OTHER",
    "device-limit": "SS_API_SET_LIMIT", "device-reset": "SS_API_DEVICE_RESET", "graph-node": "SS_API_GRAPH_NODE",
}

# host column -> (enum ss_api_host constant, description).  What the call does
# to the calling host thread: CUDA's "API synchronization behavior" section
# and measurements on an H100 (CUDA 13); analyzer/model.c ss_call_host_wait()
# turns the per-call values (copy, memset, graph) into a wait.
HOSTS = {
    "none":         ("SS_API_HOST_NONE", "returns without waiting for GPU work"),
    "stream":       ("SS_API_HOST_STREAM", "waits for all work submitted to its stream so far"),
    "event":        ("SS_API_HOST_EVENT", "waits for the work its event captured"),
    "device":       ("SS_API_HOST_DEVICE", "waits for all work of the current device"),
    "query":        ("SS_API_HOST_QUERY", "waits for nothing; success proves the stream or event(s) complete"),
    "copy":         ("SS_API_HOST_COPY", "synchronous copy, by memory kinds: pageable->device waits for the "
                     "stream before the copy (staged), pinned->device, device->host and host->host wait for "
                     "the copy, device->device does not wait"),
    "copy-async":   ("SS_API_HOST_COPY_ASYNC", "asynchronous copy: waits for the stream and the copy only "
                     "device->pageable host and host->host"),
    "memset":       ("SS_API_HOST_MEMSET", "synchronous memset: waits for the stream and the memset only on "
                     "host memory; returns before its memset ends on device memory (measured)"),
    "memset-async": ("SS_API_HOST_MEMSET_ASYNC", "does not wait"),
    "graph":        ("SS_API_HOST_GRAPH", "does not wait, unless a memcpy node writes pageable host memory: "
                     "then it waits for the graph (measured)"),
    "peer":         ("SS_API_HOST_PEER", "does not wait, but is serialized on the GPU with all pending and "
                     "future work of the current, source and destination devices (cudaMemcpyPeer, documented)"),
}

# Host values that only make sense for one class (the analyzer decides them
# from the memory kinds of a copy or memset, or the ops of a graph launch).
HOST_FOR_CLASS = {"copy-sync": ("copy", "peer"), "copy-async": ("copy-async",), "memset-sync": ("memset",),
                  "memset-async": ("memset-async",), "graph-launch": ("graph",)}


# Sampled recording (preload/sampling.c, docs/sampling.md): the classes whose
# work is on the GPU timeline or waits for it.  While recording is OFF a hot
# call is only counted and passed straight through (no record, stack, NVTX
# range or kernel parameters), and CUPTI's callbacks of hot rows are
# disabled; every other class (structural: allocation, streams and events
# created and destroyed, capture, device settings) is recorded always.
HOT_CLASSES = ("launch", "copy-async", "copy-sync", "memset-async", "memset-sync", "event-record", "event-query",
               "event-sync", "event-elapsed", "stream-query", "stream-sync", "stream-wait", "device-sync",
               "host-func", "graph-launch", "stream-wait-value", "stream-write-value", "stream-batch-memop",
               "managed-memory")
assert all(c in CLASSES for c in HOT_CLASSES)


def is_hot(e):
    return e.cls in HOT_CLASSES


class TableError(Exception):
    pass


class Entry:
    def __init__(self, lineno, name, cbid, twin, cls, host, params, slots, options):
        self.lineno = lineno
        self.name = name
        self.cls = cls
        self.host = host
        self.params_text = params
        self.params = parse_params(params, lineno)
        self.slots = slots
        self.options = options
        self.cbid_name = cbid if not re.fullmatch(r"v\d+", cbid) else "%s_%s" % (name, cbid)
        self.twin = None          # (symbol, cbid name, flag description)
        domain = options.get("domain", "runtime")
        if domain not in ("runtime", "driver"):
            raise TableError("line %d: domain must be runtime or driver" % lineno)
        self.driver = domain == "driver"
        if self.driver and twin != "-":
            # CUPTI spells a driver twin <cbid>_ptsz (cuMemcpyHtoDAsync_v2_ptsz).
            if twin not in ("ptsz", "ptds"):
                raise TableError("line %d: a driver twin is '-', 'ptsz' or 'ptds'" % lineno)
            self.twin = ("%s_%s" % (name, twin), "%s_%s" % (self.cbid_name, twin), twin)
        elif twin != "-":
            parts = twin.split()
            if len(parts) != 2 or parts[0] not in ("ptsz", "ptds"):
                raise TableError("line %d: twin must be '-' or 'ptsz|ptds <version>'" % lineno)
            suffix, ver = parts
            tcbid = ver if not re.fullmatch(r"v\d+", ver) else "%s_%s_%s" % (name, suffix, ver)
            self.twin = ("%s_%s" % (name, suffix), tcbid, suffix)

    @property
    def cupti(self):
        return self.options.get("cupti", "yes") != "no"


def parse_params(text, lineno):
    """Split 'void *dst, const void *src' into [(decl, name)]."""
    text = text.strip()
    if text == "void":
        return []
    out = []
    for decl in text.split(","):
        decl = decl.strip()
        m = re.search(r"([A-Za-z_][A-Za-z0-9_]*)\s*$", decl)
        if not m or m.group(1) in ("void", "int", "t"):
            raise TableError("line %d: cannot find the parameter name in '%s'" % (lineno, decl))
        out.append((decl, m.group(1)))
    return out


def parse_slots(text, lineno):
    slots = []
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        key, sep, expr = item.partition("=")
        key, expr = key.strip(), expr.strip()
        if not sep or not expr:
            raise TableError("line %d: slot '%s' is not key=expression" % (lineno, item))
        if key not in SLOT_KEYS + ("mem", "fill"):
            raise TableError("line %d: unknown slot '%s'" % (lineno, key))
        slots.append((key, expr))
    return slots


def parse_options(text, lineno):
    opts = {}
    for item in text.split(";"):
        item = item.strip()
        if not item:
            continue
        key, sep, val = item.partition("=")
        if not sep or key.strip() not in ("via", "cupti", "kernel", "kernel-node", "node-params", "domain"):
            raise TableError("line %d: unknown option '%s'" % (lineno, item))
        opts[key.strip()] = val.strip()
    return opts


def read_table(path):
    entries = []
    seen = set()
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            fields = [x.strip() for x in line.split("|")]
            if len(fields) not in (7, 8):
                raise TableError("line %d: expected 7 or 8 '|'-separated fields, got %d" % (lineno, len(fields)))
            if len(fields) == 7:
                fields.append("")
            name, cbid, twin, cls, host, params, slots, options = fields
            if cls not in CLASSES:
                raise TableError("line %d: unknown class '%s'" % (lineno, cls))
            if host not in HOSTS:
                raise TableError("line %d: unknown host behaviour '%s' (one of: %s)"
                                 % (lineno, host, ", ".join(HOSTS)))
            want = HOST_FOR_CLASS.get(cls)
            if (want and host not in want) or (want is None and any(host in w for w in HOST_FOR_CLASS.values())):
                raise TableError("line %d: class %s cannot have host '%s'%s"
                                 % (lineno, cls, host, " (it is '%s')" % "' or '".join(want) if want else ""))
            if name in seen:
                raise TableError("line %d: %s listed twice" % (lineno, name))
            seen.add(name)
            e = Entry(lineno, name, cbid, twin, cls, host, params,
                      parse_slots(slots, lineno), parse_options(options, lineno))
            pnames = {n for _, n in e.params}
            if e.cls == "launch" and "kernel" not in e.options:
                raise TableError("line %d: launch entries need kernel=<func>,<args>" % lineno)
            if "kernel" in e.options:
                names = [n.strip() for n in e.options["kernel"].split(",")]
                if len(names) != (3 if e.driver else 2):
                    raise TableError("line %d: kernel= needs %s" % (
                        lineno, "<func>,<kernelParams>,<extra>" if e.driver else "<func>,<args>"))
                for i, n in enumerate(names):
                    if n not in pnames and not (e.driver and i == 2 and n == "-"):
                        raise TableError("line %d: kernel= names '%s', not a parameter" % (lineno, n))
            if "kernel-node" in e.options and (e.cls != "graph-node" or e.options["kernel-node"] not in pnames):
                raise TableError("line %d: kernel-node= names the cudaKernelNodeParams parameter of a graph-node row"
                                 % lineno)
            if "kernel-node" in e.options and any(k == "func" for k, _ in e.slots):
                raise TableError("line %d: kernel-node= fills func itself" % lineno)
            if "node-params" in e.options and (e.cls != "graph-node" or e.options["node-params"] not in pnames
                                               or "kernel-node" in e.options
                                               or any(k in ("func", "ptr", "ptr2", "bytes") for k, _ in e.slots)):
                raise TableError("line %d: node-params= names the cudaGraphNodeParams (CUgraphNodeParams) parameter "
                                 "of a graph-node row, and fills func, params, ptr, ptr2 and bytes itself" % lineno)
            if e.driver and (e.cls == "set-device" or "via" in e.options or "cupti" in e.options):
                raise TableError("line %d: a driver row cannot be set-device nor have via=/cupti=" % lineno)
            if e.cls == "memset-sync" and not any(k == "mem" for k, _ in e.slots):
                raise TableError("line %d: memset-sync needs mem= (its NVTX range depends on it)" % lineno)
            entries.append(e)
    return entries


def api_name(cbid_name):
    """CUPTI spelling without prefix and version: cudaMemcpyAsync_ptsz."""
    return re.sub(r"_v\d+$", "", cbid_name)


def driver_api_name(cbid_name):
    """The name a driver call is recorded under: the driver function without
    its ABI version, wherever CUPTI puts it (cuMemcpyHtoDAsync_v2_ptsz ->
    cuMemcpyHtoDAsync_ptsz, cuCtxSynchronize_v2 -> cuCtxSynchronize)."""
    return re.sub(r"_v\d+(?=_pt[sd][zs]$|$)", "", cbid_name)


def record_name(e, cbid_name):
    return driver_api_name(cbid_name) if e.driver else api_name(cbid_name)


def c_string(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def slot_code(e, indent, mem_pre):
    """C statements that fill `rec` from the parameters (and `ret`)."""
    out = []
    for key, expr in e.slots:
        if key in ("stream", "event", "ptr", "ptr2", "func"):
            if expr.startswith("SS_OUT("):
                out.append("rec.%s = %s;" % (key, expr))
            else:
                out.append("rec.%s = (uint64_t)(uintptr_t)(%s);" % (key, expr))
        elif key == "bytes":
            out.append("rec.bytes = (uint64_t)(%s);" % expr)
        elif key == "arg":
            out.append("rec.arg = (uint32_t)(%s);" % expr)
        elif key == "arg2":
            out.append("rec.arg2 = (int32_t)(%s);" % expr)
        elif key == "fill":
            m = re.fullmatch(r"([A-Za-z_][A-Za-z0-9_]*)\((.*)\)", expr)
            if not m:
                raise TableError("line %d: fill= must be helper(args)" % e.lineno)
            args = m.group(2).strip()
            out.append("%s(&rec%s);" % (m.group(1), (", " + args) if args else ""))
        elif key == "mem":
            ends = [x.strip() for x in expr.split(",")]
            if len(ends) != 2:
                raise TableError("line %d: mem= needs <dst>,<src>" % e.lineno)
            for field, end in zip(("mem_dst", "mem_src"), ends):
                if end == "-":
                    continue
                if end in MEM_CONSTANTS:
                    out.append("rec.%s = %s;" % (field, MEM_CONSTANTS[end]))
                elif field == "mem_dst" and mem_pre:
                    out.append("rec.mem_dst = mem_pre;")
                else:
                    out.append("rec.%s = ss_api_mem_kind((const void *)(%s));" % (field, end))
    return ["%s%s" % (indent, s) for s in out]


def mem_dst_expr(e):
    for key, expr in e.slots:
        if key == "mem":
            return expr.split(",")[0].strip()
    return None


# Driver calls subscribed for the parameter fallback alone, not recorded as
# themselves: the graph kernel-node calls cudart may make inside
# cudaGraphAddKernelNode & co. that are not table rows (their v1 entry
# points).  preload/api_support.c ss_kernel_node_target reads them.
FALLBACK_DRIVER_CBIDS = ["cuGraphAddKernelNode", "cuGraphKernelNodeSetParams", "cuGraphExecKernelNodeSetParams",
                         "cuGraphAddNode"]


def node_kernel(e):
    """For a graph-node row that names its node's parameters (kernel-node=,
    node-params=): C expressions for the kernel the node will run, its
    kernelParams and its extra (NULL when the struct is NULL or, for
    node-params=, the node is not a kernel node); None for other rows.  A
    driver row's kernel is its func, or its kern when func is NULL."""
    if "kernel-node" in e.options:
        p, k, guard = e.options["kernel-node"], "", "%s" % e.options["kernel-node"]
    elif "node-params" in e.options:
        p = e.options["node-params"]
        k = "kernel."
        guard = "%s != NULL && %s->type == %s" % (p, p, "CU_GRAPH_NODE_TYPE_KERNEL" if e.driver
                                                  else "cudaGraphNodeTypeKernel")
    else:
        return None
    if e.driver:
        func = "(%s->%sfunc ? (const void *)%s->%sfunc : (const void *)%s->%skern)" % (p, k, p, k, p, k)
        extra = "(%s ? %s->%sextra : NULL)" % (guard, p, k)
    else:
        func, extra = "(const void *)%s->%sfunc" % (p, k), "NULL"
    return ("(%s ? %s : NULL)" % (guard, func), "(%s ? %s->%skernelParams : NULL)" % (guard, p, k), extra)


def post_code(e, indent, t="t"):
    """Statements after the record is filled, before it is emitted."""
    out = []
    if e.cls == "launch" and e.driver:
        func, args, extra = [x.strip() for x in e.options["kernel"].split(",")]
        out.append("uint64_t params[SS_API_MAX_PARAMS];")
        out.append("uint32_t nparams = ss_api_driver_launch_params(&rec, %s, (const void *)(%s), %s, %s, params);"
                   % (t, func, args, "NULL" if extra == "-" else extra))
    elif e.cls == "launch":
        func, args = [x.strip() for x in e.options["kernel"].split(",")]
        known = "1" if e.options.get("via") == "cuda_launch_kernel" else "0"
        out.append("uint64_t params[SS_API_MAX_PARAMS];")
        out.append("uint32_t nparams = ss_api_launch_params(&rec, %s, (const void *)(%s), %s, %s, params);"
                   % (t, func, args, known))
    elif node_kernel(e):
        # the node's kernel and the parameters it will run with, read as a
        # launch's (nothing when the struct is NULL, cudart's error, or the
        # node is no kernel node; the call also disarms the fallback)
        func, args, extra = node_kernel(e)
        if "node-params" in e.options:
            # the generic node calls (CUDA 12.2+): a copy's or a memset's
            # range as the slots, by the node's type
            g = e.options["node-params"]
            cpy, mset = (("CU_GRAPH_NODE_TYPE_MEMCPY", "CU_GRAPH_NODE_TYPE_MEMSET") if e.driver
                         else ("cudaGraphNodeTypeMemcpy", "cudaGraphNodeTypeMemset"))
            out.append("if (%s != NULL && %s->type == %s) {" % (g, g, cpy))
            out.append("    %s(&rec, &%s->memcpy.copyParams);"
                       % ("ss_api_fill_cu_memcpy3d" if e.driver else "ss_api_fill_memcpy3d", g))
            out.append("} else if (%s != NULL && %s->type == %s) {" % (g, g, mset))
            out.append("    rec.ptr = (uint64_t)(uintptr_t)%s->memset.dst;" % g)
            out.append("    rec.bytes = SS_MEMSET_NODE_BYTES(&%s->memset);" % g)
            # event record / wait nodes: the event, and arg2 says which
            # (SS_GRAPH_NODE_EVENT_RECORD / _WAIT, trace_format.h)
            rec_t, wait_t = (("CU_GRAPH_NODE_TYPE_EVENT_RECORD", "CU_GRAPH_NODE_TYPE_WAIT_EVENT") if e.driver
                             else ("cudaGraphNodeTypeEventRecord", "cudaGraphNodeTypeWaitEvent"))
            out.append("} else if (%s != NULL && %s->type == %s) {" % (g, g, rec_t))
            out.append("    rec.event = (uint64_t)(uintptr_t)%s->eventRecord.event;" % g)
            out.append("    rec.arg2 = SS_GRAPH_NODE_EVENT_RECORD;")
            out.append("} else if (%s != NULL && %s->type == %s) {" % (g, g, wait_t))
            out.append("    rec.event = (uint64_t)(uintptr_t)%s->eventWait.event;" % g)
            out.append("    rec.arg2 = SS_GRAPH_NODE_EVENT_WAIT;")
            out.append("}")
        out.append("const void *node_func = %s;" % func)
        out.append("rec.func = (uint64_t)(uintptr_t)node_func;")
        out.append("uint64_t params[SS_API_MAX_PARAMS];")
        if e.driver:
            out.append("uint32_t nparams = ss_api_driver_launch_params(&rec, %s, node_func, %s, %s, params);"
                       % (t, args, extra))
        else:
            out.append("uint32_t nparams = ss_api_launch_params(&rec, %s, node_func, %s, 0, params);" % (t, args))
    if e.cls == "alloc":
        out.append("if (ret == cudaSuccess)")
        out.append("    ss_api_note_alloc(rec.ptr, rec.bytes);")
    if e.cls == "set-device":
        out.append("ss_api_set_device(%s, device, ret);" % t)
        out.append("rec.device = %s->device;" % t)
    return [indent + s for s in out]


# Calls that get a full native stack although the analyzer does not blame
# them: they can block (stream creation took 134 ms on a real run), and a
# finding about a stream or event is easier to act on with where it was made
# (cudaEventElapsedTime: where the program measures, for event-timing-gap).
STACK_ALWAYS_CLASSES = ("stream-create", "stream-destroy", "event-create", "event-open", "event-destroy", "set-device",
                        "device-limit", "event-elapsed")


def stack_want(e):
    """C expression for ss_api_emit's stack_want (enum ss_stack_want)."""
    blame = CLASSES[e.cls][0]
    if e.cls == "launch":
        # Legacy-stream launches are blamed (they serialize): every one gets
        # its stack; launches elsewhere get a sampled one (callsite.c).
        return "(%s ? SS_STACK_FULL : SS_STACK_SAMPLED)" % blame
    if e.cls in STACK_ALWAYS_CLASSES or blame == "1":
        return "SS_STACK_FULL"
    if blame == "0":
        return "SS_STACK_NONE"
    return "(%s ? SS_STACK_FULL : SS_STACK_NONE)" % blame


def emit_code(e, name_expr, indent):
    want = stack_want(e)
    out = []
    if e.cls == "launch" or node_kernel(e):
        out.append("ss_api_emit(&rec, %s, %s, params, nparams, SS_CALL_CONTEXT);" % (name_expr, want))
    else:
        out.append("ss_api_emit(&rec, %s, %s, NULL, 0, SS_CALL_CONTEXT);" % (name_expr, want))
    if e.cls == "stream-create":
        out.append("if (ret == cudaSuccess)")
        out.append("    ss_api_stream_created(&rec);")
    if e.cls == "capture":
        # Sampling never switches OFF inside a capture.  An end that found the
        # capture invalidated (901 in both APIs) still ended it.
        if "Begin" in e.name:
            out.append("if (ret == 0)")
            out.append("    ss_sampling_capture(1);")
        else:
            out.append("if (ret == 0 || ret == 901 /* cudaErrorStreamCaptureInvalidated */)")
            out.append("    ss_sampling_capture(0);")
    return [indent + s for s in out]


def nvtx_condition(e):
    """C condition under which the call gets an NVTX range, or None."""
    cat = CLASSES[e.cls][1]
    if cat is None:
        return None
    if e.cls == "memset-sync":
        return "(mem_pre != SS_MEM_DEVICE && mem_pre != SS_MEM_UNKNOWN)"
    return "1"


def gen_wrapper(e, symbol, cbid_name, ptsz):
    params = e.params_text if e.params else "void"
    args = ", ".join(n for _, n in e.params)
    flags = ["SS_API_F_INTERPOSER"]
    if ptsz:
        flags.append("SS_API_F_PTSZ")
    if e.options.get("via") == "cuda_launch_kernel":
        flags.append("SS_API_F_VIA_CUDA_LAUNCH_KERNEL")
    cbid = "CUPTI_RUNTIME_TRACE_CBID_" + cbid_name
    name = c_string(api_name(cbid_name))
    fn_t = "ss_real_%s_fn" % symbol
    slot = "ss_real_%s" % symbol
    cat = CLASSES[e.cls][1]
    cond = nvtx_condition(e)
    L = []
    L.append("/* %s (table line %d, class %s) */" % (symbol, e.lineno, e.cls))
    L.append("typedef cudaError_t (CUDARTAPI *%s)(%s);" % (fn_t, params))
    L.append("static void *volatile %s;" % slot)
    L.append("SS_EXPORT cudaError_t CUDARTAPI %s(%s)" % (symbol, params))
    L.append("{")
    L.append("    %s real = (%s)__atomic_load_n(&%s, __ATOMIC_ACQUIRE);" % (fn_t, fn_t, slot))
    L.append("    if (__builtin_expect(real == NULL, 0)) {")
    L.append("        real = (%s)ss_api_resolve(%s, &%s);" % (fn_t, c_string(symbol), slot))
    L.append("        if (real == NULL)")
    L.append("            return cudaErrorSymbolNotFound;  /* no cudart exports it: nothing to call */")
    L.append("    }")
    L.append("    ss_api_tls *t = ss_api_thread();")
    L.append("    /* Nested inside another recorded call (cudart calling itself through")
    if is_hot(e):
        L.append("     * the PLT), recording off, or a hot call while sampling is OFF (it is")
        L.append("     * counted): pass straight through. */")
        L.append("    if (t->active != NULL || !ss_recording() || !ss_api_hot_admit(t))")
    else:
        L.append("     * the PLT), or recording off: pass straight through. */")
        L.append("    if (t->active != NULL || !ss_recording())")
    L.append("        return real(%s);" % args)
    L.append("    ss_api_rec rec;")
    L.append("    ss_api_rec_init(&rec, %s, %s, t);" % (cbid, " | ".join(flags)))
    if e.cls == "memset-sync":
        L.append("    /* Host-memory memsets block: ask before the call whether to open a range. */")
        L.append("    uint8_t mem_pre = ss_api_mem_kind((const void *)(%s));" % mem_dst_expr(e))
    if cond is not None:
        L.append("    int nvtx = %s;" % cond)
        L.append("    if (nvtx)")
        L.append("        ss_nvtx_begin_call(%s, %s, %s);" % (cbid, name, cat))
    if e.cls == "launch":
        func = e.options["kernel"].split(",")[0].strip()
        L.append("    /* Arms the driver-level parameter fallback; the return address keys")
        L.append("     * the launch-stack sampling cache (callsite.c). */")
        L.append("    ss_api_launch_enter(t, (const void *)(%s), (uintptr_t)__builtin_return_address(0));" % func)
    elif node_kernel(e):
        L.append("    /* Arms the driver-level parameter fallback (the node's kernel may be")
        L.append("     * a stub of another cudart): see ss_api_on_driver_callback. */")
        L.append("    ss_api_launch_enter(t, %s, 0);" % node_kernel(e)[0])
    L.append("    t->active = &rec;")
    L.append("    rec.t_enter = ss_now();")
    L.append("    cudaError_t ret = real(%s);" % args)
    L.append("    rec.t_exit = ss_now();")
    L.append("    int saved_errno = errno;")
    L.append("    t->active = NULL;")
    if cond is not None:
        L.append("    if (nvtx)")
        L.append("        ss_nvtx_end_call(%s, %s, rec.t_exit - rec.t_enter, 0);" % (cbid, name))
    L.append("    rec.ret = (int32_t)ret;")
    L += slot_code(e, "    ", e.cls == "memset-sync")
    L += post_code(e, "    ")
    L += emit_code(e, name, "    ")
    L.append("    errno = saved_errno;")
    L.append("    return ret;")
    L.append("}")
    L.append("")
    return L


def gen_cupti_case(e, cbid_name, ptsz):
    if e.driver:
        return gen_driver_case(e, cbid_name, ptsz)
    cbid = "CUPTI_RUNTIME_TRACE_CBID_" + cbid_name
    name = c_string(api_name(cbid_name))
    flags = ["SS_API_F_CUPTI_CB"] + (["SS_API_F_PTSZ"] if ptsz else [])
    cat = CLASSES[e.cls][1]
    cond = nvtx_condition(e)
    L = []
    L.append("    case %s: {  /* table line %d */" % (cbid, e.lineno))
    if e.params:
        L.append("        const %s_params *ss_params = (const %s_params *)d->functionParams;"
                 % (cbid_name, cbid_name))
        for decl, n in e.params:
            L.append("        %s = ss_params->%s;" % (decl, n))
            L.append("        (void)%s;" % n)
    if e.cls == "memset-sync":
        L.append("        uint8_t mem_pre = ss_api_mem_kind((const void *)(%s));" % mem_dst_expr(e))
    if cond is not None:
        L.append("        int nvtx = %s;" % cond)
    else:
        L.append("        int nvtx = 0;")
    L.append("        if (site == CUPTI_API_ENTER) {")
    enter = "ss_api_cb_enter(t, cbid, nvtx, %s, %s, %d)" % (name, cat or "0", int(is_hot(e)))
    if e.cls == "launch":
        func = e.options["kernel"].split(",")[0].strip()
        L.append("            if (%s)   /* outermost and recorded: the call this record is for */" % enter)
        L.append("                ss_api_launch_enter(t, (const void *)(%s), 0);" % func)
    elif node_kernel(e):
        # a static cudart's stub is unknown to the shim's cudart: the
        # driver-level graph call inside this one reads the parameters
        L.append("            if (%s)   /* outermost and recorded: arm the driver-level fallback */" % enter)
        L.append("                ss_api_launch_enter(t, %s, 0);" % node_kernel(e)[0])
    else:
        L.append("            (void)%s;" % enter)
    L.append("            return 1;")
    L.append("        }")
    L.append("        if (!ss_api_cb_exit(t, cbid, %s))" % name)
    L.append("            return 1;")
    L.append("        cudaError_t ret = d->functionReturnValue ? *(const cudaError_t *)d->functionReturnValue : cudaSuccess;")
    return L + callback_record_code(e, name, "cbid", flags, "t->cb_t_enter")


def callback_record_code(e, name, cbid_var, flags, t_enter):
    """The exit half shared by the runtime and driver callback cases: the
    record of the call (its `ret` already read), its slots, emitted."""
    L = []
    L.append("        ss_api_rec rec;")
    L.append("        ss_api_rec_init(&rec, %s, %s, t);" % (cbid_var, " | ".join(flags)))
    L.append("        rec.t_enter = %s;" % t_enter)
    L.append("        rec.t_exit = ss_now();")
    L.append("        rec.corr = d->correlationId;")
    L.append("        rec.ret = (int32_t)ret;")
    L += slot_code(e, "        ", e.cls == "memset-sync")
    L += post_code(e, "        ")
    L += emit_code(e, name, "        ")
    L.append("        return 1;")
    L.append("    }")
    return L


def gen_driver_case(e, cbid_name, ptsz):
    """A driver-API row's case in ss_api_cupti_driver_dispatch: called only
    for driver calls made outside every runtime call (api_support.c); `rcbid`
    is the recorded cbid, SS_API_CBID_DRIVER + CUPTI's."""
    name = c_string(driver_api_name(cbid_name))
    flags = ["SS_API_F_CUPTI_CB", "SS_API_F_DRIVER"] + (["SS_API_F_PTSZ"] if ptsz else [])
    cat = CLASSES[e.cls][1]
    cond = nvtx_condition(e)
    L = []
    L.append("    case CUPTI_DRIVER_TRACE_CBID_%s: {  /* table line %d */" % (cbid_name, e.lineno))
    if e.params:
        # A _ptsz/_ptds twin has the same prototype, but CUPTI's struct for it
        # may name a field differently (cuGraphLaunch_ptsz: hGraphExec): read
        # it through the base function's struct, whose layout must match.
        if ptsz:
            L.append("        _Static_assert(sizeof(%s_params) == sizeof(%s_params), \"twin params layout\");"
                     % (cbid_name, e.cbid_name))
        L.append("        const %s_params *ss_params = (const %s_params *)d->functionParams;"
                 % (e.cbid_name, e.cbid_name))
        for decl, n in e.params:
            L.append("        %s = ss_params->%s;" % (decl, n))
            L.append("        (void)%s;" % n)
    if e.cls == "memset-sync":
        L.append("        uint8_t mem_pre = ss_api_mem_kind((const void *)(uintptr_t)(%s));" % mem_dst_expr(e))
    L.append("        int nvtx = %s;" % (cond if cond is not None else "0"))
    L.append("        if (site == CUPTI_API_ENTER) {")
    func = "NULL"
    if e.cls == "launch":
        func = "(const void *)(%s)" % e.options["kernel"].split(",")[0].strip()
    L.append("            ss_api_drv_enter(t, rcbid, nvtx, %s, %s, %s, %d);" % (name, cat or "0", func, int(is_hot(e))))
    L.append("            return 1;")
    L.append("        }")
    L.append("        if (!ss_api_drv_exit(t, rcbid, %s))" % name)
    L.append("            return 1;")
    L.append("        /* CUresult, kept as an int: CUDA_SUCCESS and cudaSuccess are both 0. */")
    L.append("        int ret = d->functionReturnValue ? (int)*(const CUresult *)d->functionReturnValue : 0;")
    return L + callback_record_code(e, name, "rcbid", flags, "t->drv_t_enter")


HEADER = """/* Generated by tools/gen_api.py from preload/cuda_api.tab: do not edit. */
"""

WRAP_PRELUDE = """#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include "api_support.h"   /* SS_EXPORT: base.h */

/* A slot's SS_CALL_CONTEXT: CUPTI's id of the context the call ran in, lent
 * by the CUPTI callback that fires inside the call together with its
 * correlation id: valid when that callback fired (a corr), else 0.  Derived
 * so that no wrapper pays a store to clear it before the call. */
#define SS_CALL_CONTEXT (rec.corr ? t->lent_ctx : 0u)

/* Every wrapper has the same shape: resolve the real entry point once, mark
 * the thread as inside a recorded call (so the CUPTI callback that fires in
 * the real call only lends its correlation id), call through, build the
 * record on the stack and copy it into the thread's buffer at exit.  The
 * return value and errno pass through unchanged. */
static inline void ss_api_rec_init(ss_api_rec *r, uint32_t cbid, uint32_t flags, const ss_api_tls *t)
{
    __builtin_memset(r, 0, sizeof *r);
    r->cbid = cbid;
    r->flags = flags;
    r->tid = ss_tid();
    r->device = t->device;
}
"""


def gen_wrap_file(entries, twins):
    L = [HEADER]
    if twins:
        L.append("/* The per-thread-default-stream twins: with this macro cuda_runtime_api.h")
        L.append(" * declares cudaMemcpyAsync as cudaMemcpyAsync_ptsz (and so on), so each")
        L.append(" * wrapper below is checked against cudart's own prototype. */")
        L.append("#define CUDA_API_PER_THREAD_DEFAULT_STREAM 1")
    L.append("#include <cuda_runtime_api.h>")
    L.append("#include <cupti_runtime_cbid.h>")
    L.append(WRAP_PRELUDE)
    L.append("/* CUDA 13's <<<>>> entry points are declared only for C++ (crt/device_functions.h). */")
    L.append("cudaError_t CUDARTAPI __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);")
    L.append("cudaError_t CUDARTAPI __cudaLaunchKernel_ptsz(cudaKernel_t, dim3, dim3, void **, size_t, cudaStream_t);")
    L.append("")
    for e in entries:
        if e.driver:   # recorded through CUPTI only
            continue
        if twins:
            if e.twin:
                L += gen_wrapper(e, e.twin[0], e.twin[1], True)
        else:
            L += gen_wrapper(e, e.name, e.cbid_name, False)
    return "\n".join(L) + "\n"


CUPTI_PRELUDE = """#include <errno.h>
#include <stdint.h>
#include <stddef.h>
#include <cuda_runtime_api.h>
#include <cupti.h>   /* also brings generated_cuda_runtime_api_meta.h: the params structs */
#include "api_support.h"

/* A slot's SS_CALL_CONTEXT: CUPTI's id of the context the call ran in. */
#define SS_CALL_CONTEXT (d->contextUid)

static inline void ss_api_rec_init(ss_api_rec *r, uint32_t cbid, uint32_t flags, const ss_api_tls *t)
{
    __builtin_memset(r, 0, sizeof *r);
    r->cbid = cbid;
    r->flags = flags;
    r->tid = ss_tid();
    r->device = t->device;
}

/* API_ENTER of a call the interposer does not see.  Only the outermost call
 * of a thread is recorded: runtime calls that cudart makes while serving it
 * are part of it. */
static int ss_api_cb_enter(ss_api_tls *t, uint32_t cbid, int nvtx, const char *name, int category, int hot)
{
    if (ss_api_cb_stale(t)) {
        /* The exit of a hot call entered before a switch to OFF never came:
         * that call is over. */
        if (t->cb_nvtx)
            ss_nvtx_end_call(t->cb_cbid, NULL, 0, 0);
        t->cb_nvtx = 0;
        t->cb_depth = 0;
    }
    if (t->cb_depth++ != 0)
        return 0;
    t->cb_cbid = cbid;
    t->cb_hot = (uint8_t)hot;
    t->cb_epoch = ss_sampling_epoch();
    /* A hot call is recorded or not as a whole, by the state at its entry. */
    t->cb_record = (uint8_t)ss_api_callback_admit(t, hot);
    t->cb_nvtx = (uint8_t)(nvtx != 0 && t->cb_record);
    if (t->cb_nvtx)
        ss_nvtx_begin_call(cbid, name, category);
    t->cb_t_enter = ss_now();
    return t->cb_record;
}

/* API_EXIT: returns 1 when this exit closes the outermost call and the
 * record should be written. */
static int ss_api_cb_exit(ss_api_tls *t, uint32_t cbid, const char *name)
{
    if (t->cb_depth == 0)          /* subscribed in the middle of a call */
        return 0;
    if (--t->cb_depth != 0)
        return 0;
    if (t->cb_cbid != cbid)        /* unbalanced callbacks: do not guess */
        return 0;
    if (t->cb_nvtx) {
        ss_nvtx_end_call(cbid, name, ss_now() - t->cb_t_enter, 0);
        t->cb_nvtx = 0;
    }
    return t->cb_record;
}

/* The same for a driver call made outside every runtime call (its own
 * depth: the driver does not call its public API from inside it, but a
 * callback the program runs on this thread could).  `func` is a launch's
 * CUfunction: exact memory mode joins the launch to this record through it. */
static void ss_api_drv_enter(ss_api_tls *t, uint32_t rcbid, int nvtx, const char *name, int category,
                             const void *func, int hot)
{
    if (ss_api_drv_stale(t)) {
        if (t->drv_nvtx)
            ss_nvtx_end_call(t->drv_cbid, NULL, 0, 0);
        t->drv_nvtx = 0;
        t->drv_depth = 0;
    }
    if (t->drv_depth++ != 0)
        return;
    t->drv_cbid = rcbid;
    t->drv_hot = (uint8_t)hot;
    t->drv_epoch = ss_sampling_epoch();
    t->drv_record = (uint8_t)ss_api_callback_admit(t, hot);
    t->drv_nvtx = (uint8_t)(nvtx != 0 && t->drv_record);
    if (func != NULL && t->drv_record)
        t->launch_func = func;
    if (t->drv_nvtx)
        ss_nvtx_begin_call(rcbid, name, category);
    t->drv_t_enter = ss_now();
}

static int ss_api_drv_exit(ss_api_tls *t, uint32_t rcbid, const char *name)
{
    if (t->drv_depth == 0)
        return 0;
    if (--t->drv_depth != 0)
        return 0;
    if (t->drv_nvtx) {
        ss_nvtx_end_call(rcbid, name, ss_now() - t->drv_t_enter, 0);
        t->drv_nvtx = 0;
    }
    if (t->drv_cbid != rcbid) {
        t->launch_func = NULL;
        return 0;
    }
    return t->drv_record;
}
"""


def gen_cupti_file(entries):
    L = [HEADER, CUPTI_PRELUDE]
    L.append("int ss_api_cupti_dispatch(uint32_t cbid, const void *cbdata, ss_api_tls *t, int site)")
    L.append("{")
    L.append("    const CUpti_CallbackData *d = (const CUpti_CallbackData *)cbdata;")
    L.append("    switch (cbid) {")
    for e in entries:
        if not e.cupti or e.driver:
            continue
        L += gen_cupti_case(e, e.cbid_name, False)
        if e.twin:
            L += gen_cupti_case(e, e.twin[1], True)
    L.append("    default:")
    L.append("        return 0;")
    L.append("    }")
    L.append("}")
    L.append("")
    L.append("int ss_api_cupti_driver_dispatch(uint32_t cbid, const void *cbdata, ss_api_tls *t, int site)")
    L.append("{")
    L.append("    const CUpti_CallbackData *d = (const CUpti_CallbackData *)cbdata;")
    L.append("    const uint32_t rcbid = SS_API_CBID_DRIVER + cbid;")
    L.append("    switch (cbid) {")
    for e in entries:
        if not e.driver:
            continue
        L += gen_cupti_case(e, e.cbid_name, False)
        if e.twin:
            L += gen_cupti_case(e, e.twin[1], True)
    L.append("    default:")
    L.append("        (void)rcbid;")
    L.append("        return 0;")
    L.append("    }")
    L.append("}")
    L.append("")
    # Every callback id the table wants, and those sampling disables while
    # OFF (cupti.c ss_cupti_set_hot), per domain.
    for array, hot_only in (("ss_api_cbids", False), ("ss_api_driver_cbids", False),
                            ("ss_api_hot_cbids", True), ("ss_api_hot_driver_cbids", True)):
        driver = "driver" in array
        prefix = "CUPTI_DRIVER_TRACE_CBID_" if driver else "CUPTI_RUNTIME_TRACE_CBID_"
        ids = []
        for e in entries:
            if not e.cupti or e.driver != driver or (hot_only and not is_hot(e)):
                continue
            ids.append(e.cbid_name)
            if e.twin:
                ids.append(e.twin[1])
        if array == "ss_api_driver_cbids":
            ids += [i for i in FALLBACK_DRIVER_CBIDS if i not in ids]
        L.append("const uint32_t %s[] = {" % array)
        for i in ids:
            L.append("    %s%s," % (prefix, i))
        L.append("};")
        L.append("const size_t %s_count = sizeof %s / sizeof %s[0];" % (array.replace("cbids", "cbid"), array, array))
    return "\n".join(L) + "\n"


def base_name(name):
    """What analyzer/model.c ss_api_base_name() makes of a recorded name: the
    "_v<digits>" version, then a "_ptsz"/"_ptds" suffix, dropped."""
    name = re.sub(r"_v\d+$", "", name)
    if name.endswith("_ptsz") or name.endswith("_ptds"):
        name = name[:-5]
    return name


# What the fill= helpers of preload/api_support.c put into the record, for the
# analyzer: whether `arg` is the cudaMemcpyKind, and memory kinds they always
# write (peer copies are between device memories: arrays count as device).
FILL_ARG_IS_MEMCPY_KIND = ("ss_api_fill_memcpy3d", "ss_api_fill_memcpy_batch", "ss_api_fill_memcpy3d_batch",
                           "ss_api_fill_cu_memcpy2d", "ss_api_fill_cu_memcpy3d")
# Driver copies say their direction in their name: the table writes the
# cudaMemcpyKind it implies as a constant.
MEMCPY_KIND_CONSTANTS = ("cudaMemcpyHostToHost", "cudaMemcpyHostToDevice", "cudaMemcpyDeviceToHost",
                         "cudaMemcpyDeviceToDevice", "cudaMemcpyDefault")
FILL_FIXED_MEM = {"ss_api_fill_memcpy3d_peer": ("SS_MEM_DEVICE", "SS_MEM_DEVICE")}


def fill_helper(e):
    for key, expr in e.slots:
        if key == "fill":
            return expr.split("(")[0].strip()
    return None


def fixed_mem(e):
    """The memory kinds the table fixes for ptr/ptr2 (mem=DEVICE,...)."""
    for key, expr in e.slots:
        if key == "mem":
            ends = [x.strip() for x in expr.split(",")]
            return tuple(MEM_CONSTANTS.get(x, "SS_MEM_UNKNOWN") for x in ends)
    return FILL_FIXED_MEM.get(fill_helper(e), ("SS_MEM_UNKNOWN", "SS_MEM_UNKNOWN"))


def arg_is_memcpy_kind(e):
    return (("arg", "kind") in e.slots or fill_helper(e) in FILL_ARG_IS_MEMCPY_KIND or
            any(k == "arg" and v in MEMCPY_KIND_CONSTANTS for k, v in e.slots))


# A 2D or 3D copy or memset: rows a pitch apart.  The record holds width x
# height (x depth) bytes from the pointer, not the pitches (analyzer: only
# the pointer's byte is known).  Said by a pitch parameter or a 2D/3D
# copy's parameter struct.
STRIDED_STRUCTS = ("cudaMemcpy3DParms", "cudaMemcpy3DPeerParms", "cudaMemcpy3DBatchOp", "CUDA_MEMCPY2D",
                   "CUDA_MEMCPY3D")


def strided(e):
    return any("pitch" in n.lower() or any(t in d for t in STRIDED_STRUCTS) for d, n in e.params)


def analyzer_names(e):
    """Every base name under which the analyzer can meet this entry: the
    symbol, CUPTI's spelling of its cbid, and the same for its twin."""
    names = [e.name, record_name(e, e.cbid_name)]
    if e.twin:
        names += [e.twin[0], record_name(e, e.twin[1])]
    if e.driver:
        # a driver symbol's ABI version may sit before its twin's suffix
        # (cuStreamWaitValue32_v2_ptsz); a driver call is recorded without it
        names = [driver_api_name(n) for n in names]
    out = []
    for n in names:
        b = base_name(n)
        if b not in out:
            out.append(b)
    return out


def gen_analyzer_table(entries):
    rows = {}
    for e in entries:
        dst, src = fixed_mem(e)
        arg_kind = "1" if arg_is_memcpy_kind(e) else "0"
        row = (ANALYZER_CLASS[e.cls], HOSTS[e.host][0], dst, src, arg_kind, "1" if strided(e) else "0", e.cls)
        for n in analyzer_names(e):
            if n in rows and rows[n][0] != row:
                raise TableError("line %d: %s means something else on line %d" % (e.lineno, n, rows[n][1]))
            rows.setdefault(n, (row, e.lineno))
    L = [HEADER]
    L.append("/* The analyzer's view of every recorded CUDA runtime entry point, sorted")
    L.append(" * by base name (analyzer/model.c looks names up by bisection): one row per")
    L.append(" * name ss_api_base_name() yields for an entry, its _ptsz/_ptds twin and")
    L.append(" * CUPTI's spelling of their callback ids. */")
    L.append('#include "model.h"')
    L.append("")
    L.append("const ss_api_info ss_api_table[] = {")
    for n in sorted(rows, key=lambda x: x.encode()):
        (cls, host, dst, src, arg_kind, strided_row, tab_cls), lineno = rows[n]
        L.append("    { %s, %s, %s, %s, %s, %s, %s, %s },  /* line %d */"
                 % (c_string(n), c_string(tab_cls), cls, host, dst, src, arg_kind, strided_row, lineno))
    L.append("};")
    L.append("const size_t ss_api_table_count = sizeof ss_api_table / sizeof ss_api_table[0];")
    return "\n".join(L) + "\n"


def doc_rows(entries):
    L = []
    for e in entries:
        blame = {"1": "yes", "0": "no"}.get(CLASSES[e.cls][0], "on legacy stream")
        nvtx = "yes" if CLASSES[e.cls][1] else "no"
        if e.cls == "memset-sync":
            nvtx = "on host memory"
        twin = "`%s`" % e.twin[0] if e.twin else "-"
        cb = "`%s`" % e.cbid_name
        if e.twin:
            cb += ", `%s`" % e.twin[1]
        shown = list(e.slots)
        if "kernel-node" in e.options:   # what post_code fills from the node's parameters
            node = e.options["kernel-node"]
            shown.append(("func, params", "%s->func%s, %s->kernelParams" % (node, " (or ->kern)" if e.driver else "", node)))
        if "node-params" in e.options:
            g = e.options["node-params"]
            shown.append(("by %s->type" % g, "kernel: func, params; memcpy: ptr, ptr2, bytes (%s); memset: ptr, bytes"
                          % ("ss_api_fill_cu_memcpy3d" if e.driver else "ss_api_fill_memcpy3d")))
        slots = "; ".join("%s=`%s`" % (k, v) for k, v in shown) or "-"
        L.append("| `%s` | %s | %s | %s | %s | %s | %s | %s |" % (e.name, twin, cb, e.cls, e.host, blame, nvtx,
                                                               slots.replace("|", "\\|")))
    return L


def gen_doc(entries, table_path):
    L = ["# CUDA runtime entry points recorded by syncsight", "",
         "Generated by `tools/gen_api.py --doc` from `%s`; do not edit by hand "
         "(`make api-docs` regenerates it)." % table_path, "",
         "Each entry point is caught two ways: by an exported wrapper in `libsyncsight.so` when the program",
         "links the shared cudart (`LD_PRELOAD`), and by a CUPTI runtime-API callback when it links cudart",
         "statically (the nvcc default). Both write the same `SS_REC_API` record, keyed by CUPTI's callback id;",
         "a call is never recorded twice. `_ptsz`/`_ptds` twins (per-thread default stream builds) set",
         "`SS_API_F_PTSZ`.", "",
         "The **host** column says what the call does to the calling thread (CUDA's \"API synchronization",
         "behavior\" and measurements on an H100, see below); the analyzer's `ss_call_host_wait()` reads it",
         "from the same table.", "",
         "| entry point | twin | CUPTI cbid | class | host | blamed | NVTX range | record slots |",
         "|---|---|---|---|---|---|---|---|"]
    runtime = [e for e in entries if not e.driver]
    driver = [e for e in entries if e.driver]
    L += doc_rows(runtime)
    L += ["", "## CUDA driver API entry points", "",
          "Triton (and so `torch.compile`), CuPy's `RawKernel`, JAX/XLA and libraries that bypass cudart call",
          "the driver API, often through pointers from `dlsym`/`cuGetProcAddress` that no interposer sees. These",
          "rows are recorded from CUPTI's driver-API callbacks, and only when the call is not made inside a",
          "runtime call (cudart implements its calls with these: the runtime call is the record). Their records",
          "set `SS_API_F_DRIVER`, their cbid is `SS_API_CBID_DRIVER` (0x10000) + CUPTI's driver cbid, and their",
          "name drops the `_v2`-style version (`cuMemcpyHtoDAsync_ptsz`); the analyzer classifies them like",
          "their runtime twins, a copy's direction coming from the function's name. Not recorded with",
          "`SYNCSIGHT_CUPTI=0` or when another tool holds CUPTI (see docs/launch-paths.md).", "",
          "| entry point | twin | CUPTI cbid | class | host | blamed | NVTX range | record slots |",
          "|---|---|---|---|---|---|---|---|"]
    L += doc_rows(driver)
    L += ["", "## Classes", ""]
    for c, (_, _, desc) in CLASSES.items():
        L.append("- **%s**: %s" % (c, desc))
    L += ["", "## What each call does to the host", ""]
    for h, (_, desc) in HOSTS.items():
        L.append("- **%s**: %s" % (h, desc))
    L += ["",
          "The analyzer decides `copy`, `copy-async` and `memset` per call from the memory kinds: the record's",
          "`mem_dst`/`mem_src`, else the kinds the table fixes (`mem=DEVICE,...`), else those of the call's",
          "CUPTI memcpy/memset record, else the allocation the pointer falls in, else the `cudaMemcpyKind`",
          "argument. When they stay unknown it takes the row's documented worst case (it waits for the",
          "stream): a missed wait makes false race reports, an invented one hides real races, and the",
          "worst case is what the program may get. Managed memory and CUDA arrays count as device memory.",
          "A pageable-to-device `cudaMemcpy` waits for the work queued on its stream before the copy, not",
          "for the copy itself (it is staged and may land after the call returns); a pageable-to-device",
          "`cudaMemcpyAsync` is staged too and orders nothing on the host. A call that failed, or that was",
          "recorded during stream capture, waited for nothing."]
    L += ["", "## Notes", "",
          "- `__cudaLaunchKernel` is what CUDA 13 compiles `kernel<<<...>>>` into; CUPTI reports it as",
          "  `cudaLaunchKernel_v7000`, so the record carries that id plus `SS_API_F_VIA_CUDA_LAUNCH_KERNEL`",
          "  (interposer only: the CUPTI path cannot tell the two apart).",
          "- Kernel launches store the 8-byte parameters (candidate pointers) in the record's tail, at most 32;",
          "  `SS_API_F_PARAMS_TRUNCATED` marks more. Parameter layouts come from `cuKernelGetParamInfo` /",
          "  `cuFuncGetParamInfo`, cached per function. When the runtime level cannot map a host stub (one",
          "  registered with another, static, cudart: cuBLAS, statically linked programs), the parameters",
          "  come from the CUPTI driver-API callback of the `cuLaunchKernel*` call made inside the launch.",
          "- Stacks: a launch on the legacy stream gets its native stack every time; a launch on any other",
          "  stream a sampled one (docs/call-sites.md); stream/event creation and destruction, `cudaSetDevice`",
          "  and `cudaDeviceSetLimit` get one although they are not blamed.",
          "- Memory kinds (`mem_dst`, `mem_src`) come from the driver (`cuPointerGetAttributes`); a host",
          "  pointer the driver does not know is pageable. cudart is never asked (it would re-enter CUPTI).",
          "- `device` is the device the thread last set with `cudaSetDevice`; -1 when it never did (then",
          "  the runtime's default, device 0, unless the program made a context current through the driver).",
          "- Nothing here queries or synchronizes a stream or an event, so stream capture stays valid.",
          ""]
    return "\n".join(L)


def write_file(path, text):
    """Write through a temporary name so an interrupted run leaves no half file."""
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(text)
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("--out", help="directory for the generated C sources")
    ap.add_argument("--doc", help="write the coverage document here")
    ap.add_argument("--list-symbols", action="store_true",
                    help="print every exported wrapper name and exit")
    a = ap.parse_args()
    try:
        entries = read_table(a.table)
    except (TableError, OSError) as err:
        print("gen_api.py: %s: %s" % (a.table, err), file=sys.stderr)
        return 1
    symbols = []
    for e in entries:
        if e.driver:   # no wrapper: CUPTI's driver callbacks record them
            continue
        symbols.append(e.name)
        if e.twin:
            symbols.append(e.twin[0])
    if a.list_symbols:
        print("\n".join(symbols))
        return 0
    if a.out:
        os.makedirs(a.out, exist_ok=True)
        write_file(os.path.join(a.out, "ss_api_wrap.c"), gen_wrap_file(entries, False))
        write_file(os.path.join(a.out, "ss_api_wrap_pt.c"), gen_wrap_file(entries, True))
        write_file(os.path.join(a.out, "ss_api_cupti.c"), gen_cupti_file(entries))
        write_file(os.path.join(a.out, "ss_api_symbols.txt"), "\n".join(symbols) + "\n")
        write_file(os.path.join(a.out, "ss_api_classes.c"), gen_analyzer_table(entries))
    if a.doc:
        write_file(a.doc, gen_doc(entries, a.table))
    return 0


if __name__ == "__main__":
    sys.exit(main())
