// Request and response shapes of the deals service live here.
export {};
