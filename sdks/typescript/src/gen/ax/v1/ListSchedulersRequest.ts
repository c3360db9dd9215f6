// Original file: ax/v1/admin.proto


export interface ListSchedulersRequest {
}

export interface ListSchedulersRequest__Output {
}
