// The audit record kinds are wire vocabulary (`readAudit` filters by them), so they live in the protocol; the hub's
// modules name them from here.
export { AuditKind, ResumeSource } from '@ag2net/protocol';
