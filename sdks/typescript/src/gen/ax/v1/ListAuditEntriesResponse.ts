// Original file: ax/v1/admin.proto

import type { AuditEntry as _ax_v1_AuditEntry, AuditEntry__Output as _ax_v1_AuditEntry__Output } from '../../ax/v1/AuditEntry';

export interface ListAuditEntriesResponse {
  'entries'?: (_ax_v1_AuditEntry)[];
  'next_page_token'?: (string);
}

export interface ListAuditEntriesResponse__Output {
  'entries': (_ax_v1_AuditEntry__Output)[];
  'next_page_token': (string);
}
