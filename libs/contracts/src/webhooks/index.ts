// Request and response shapes of the webhooks service live here.
export {};
