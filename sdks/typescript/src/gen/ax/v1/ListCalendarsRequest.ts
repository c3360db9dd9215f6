// Original file: ax/v1/admin.proto


export interface ListCalendarsRequest {
}

export interface ListCalendarsRequest__Output {
}
