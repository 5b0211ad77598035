// mode: write
// params: pad
// A throwaway node whose large value fills the open transaction log, so that the log rotates.
CREATE (:GraphmemLogFiller {pad: $pad})
