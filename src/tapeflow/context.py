"""Per-thread (and per-task) execution state: which tapes record, who watches variables."""

import contextvars

# A tuple of the GradientTapes currently recording, innermost last. Immutable tuples
# make a save/restore pair trivially correct across threads and nested contexts.
recording_tapes = contextvars.ContextVar("tapeflow_recording_tapes", default=())

# A tuple of lists; every Variable read appends itself to each (custom_gradient uses
# this to find the variables its function touched).
variable_watchers = contextvars.ContextVar("tapeflow_variable_watchers", default=())

# The Graph being traced by tf.function, or None when ops run eagerly.
current_graph = contextvars.ContextVar("tapeflow_current_graph", default=None)

# While a traced graph runs on the NumPy kernels: {stream key: Generator} for the random
# ops inside its branches and loops (ops/random.py, streams), or None.
random_streams = contextvars.ContextVar("tapeflow_random_streams", default=None)

# The tf.name_scope prefix ("outer/inner/", "" at the top) that new Variables' names get.
name_scope = contextvars.ContextVar("tapeflow_name_scope", default="")

# The innermost interpreter that bind() hands each op to (ops/registry.py Interpreter):
# graph/trace.py's graph builder while a function is traced, ops/batching.py's while a
# vectorized backward walk runs, each holding the one it covers as `parent`. None: the
# eager interpreter, which runs ops at once.
interpreter = contextvars.ContextVar("tapeflow_interpreter", default=None)

# True while tracing a function for the shapes of one call, under a trace whose shapes
# have unknown dimensions (input_signature, reduce_retracing): there TensorFlow checks
# such shapes when the graph runs, so a shape error stays an InvalidArgumentError.
shapes_known_at_run_time = contextvars.ContextVar("tapeflow_shapes_known_at_run_time",
                                                  default=False)
