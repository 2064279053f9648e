// The transfer core: job model, journal, scheduler and engine.
