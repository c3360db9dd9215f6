// Original file: ax/v1/admin.proto


export interface DeleteCalendarRequest {
  'name'?: (string);
}

export interface DeleteCalendarRequest__Output {
  'name': (string);
}
