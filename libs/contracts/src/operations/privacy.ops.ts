import { CreateErasureDto, ErasureStepReply, ErasureTarget, ErasureView } from '../privacy/privacy';
import { RpcServiceName } from '../subjects';
import { internal, noContent, resource, route } from './operation';

/**
 * Erasure of a person (docs/privacy.md). The contacts service keeps the person, so it answers and runs
 * the erasure; every other service erases its own stores when asked (`privacyStep`).
 */
export const privacy = {
  erase: route({
    service: 'contacts',
    name: 'contacts.privacy.erase',
    method: 'POST',
    path: '/privacy/erasures',
    status: 202,
    summary: 'Erase a person everywhere (by contact id or email); the same subject is the same erasure',
    access: 'write',
    // Never part of `*`: a key needs `privacy:delete` by name (docs/privacy.md, "Who may erase").
    permission: { resource: 'privacy', action: 'delete' },
    body: CreateErasureDto,
    reply: resource(ErasureView),
    idempotent: true,
    mcp: {
      tool: 'erase_person',
      title: 'Erase a person everywhere',
      description:
        'Erases a contact (subject {object:"contacts",id} or {email}) from every store: record, history, event log, stream, webhook copies, search. Cannot be undone. Poll get_erasure for the receipt.',
      destructive: true,
    },
  }),
  get: route({
    service: 'contacts',
    name: 'contacts.privacy.get',
    method: 'GET',
    path: '/privacy/erasures/:id',
    summary: 'An erasure, its status and, once completed, its receipt',
    access: 'read',
    permission: { resource: 'privacy', action: 'read' },
    reply: resource(ErasureView),
  }),
  liftSuppression: route({
    service: 'contacts',
    name: 'contacts.privacy.lift-suppression',
    method: 'DELETE',
    path: '/privacy/suppressions/:email_hmac',
    summary: "Lift the suppression of an erased person's email (by the erasure's `email_hmac`): it may be stored again",
    access: 'write',
    permission: { resource: 'privacy', action: 'delete' },
    reply: noContent,
  }),
};

/** One service's part of an erasure: it erases the person from the stores it declares (idempotent). */
export function privacyStep<S extends RpcServiceName>(service: S) {
  return internal<ErasureTarget, ErasureStepReply, S>({ service, name: `${service}.privacy.step`, idempotent: true });
}

export const privacyInternal = {
  deals: privacyStep('deals'),
  events: privacyStep('events'),
  webhooks: privacyStep('webhooks'),
};
