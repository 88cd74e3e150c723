// Request and response shapes of the contacts service live here.
export {};
