"""nCompass's profiling context classes (ncompass.trace.profile.*)."""
