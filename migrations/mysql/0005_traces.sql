-- The W3C traceparent of an instance's root span (its fire or manual trigger), written once when
-- axd creates the instance with tracing on (--otlp-endpoint); NULL when tracing was off. Any axd
-- that later dispatches the instance or records its result makes its spans children of it, so an
-- instance is one trace whichever axd handles each step.
ALTER TABLE ax_instance ADD COLUMN trace_parent VARCHAR(55) NULL;
