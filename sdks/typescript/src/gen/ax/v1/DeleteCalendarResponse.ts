// Original file: ax/v1/admin.proto


export interface DeleteCalendarResponse {
}

export interface DeleteCalendarResponse__Output {
}
