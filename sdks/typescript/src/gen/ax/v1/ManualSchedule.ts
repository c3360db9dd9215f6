// Original file: ax/v1/admin.proto


export interface ManualSchedule {
}

export interface ManualSchedule__Output {
}
