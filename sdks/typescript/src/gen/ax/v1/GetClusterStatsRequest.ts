// Original file: ax/v1/admin.proto


export interface GetClusterStatsRequest {
}

export interface GetClusterStatsRequest__Output {
}
