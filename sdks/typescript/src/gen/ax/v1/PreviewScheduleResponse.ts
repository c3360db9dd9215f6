// Original file: ax/v1/admin.proto

import type { SchedulePreview as _ax_v1_SchedulePreview, SchedulePreview__Output as _ax_v1_SchedulePreview__Output } from '../../ax/v1/SchedulePreview';

export interface PreviewScheduleResponse {
  'preview'?: (_ax_v1_SchedulePreview | null);
}

export interface PreviewScheduleResponse__Output {
  'preview': (_ax_v1_SchedulePreview__Output | null);
}
