//! Streaming (placeholder).
