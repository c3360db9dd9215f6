// Original file: ax/v1/admin.proto


export interface GetCalendarRequest {
  'name'?: (string);
}

export interface GetCalendarRequest__Output {
  'name': (string);
}
